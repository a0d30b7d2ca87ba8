#!/bin/sh
# Where the configuration is found (config.h, "Finding the file"): the
# environment variable, asynccompile.yaml in the directory make was
# started from (before -C, for sub-makes too), the user's XDG file,
# /etc/asynccompile.yaml; the first file found wins whole; a file
# another user owns or others can write is refused; a relative trace:
# goes where make started.
. "$(dirname "$0")/lib.sh"
unset ASYNC_COMPILE_CONFIG
sm=${TEST_START_METHOD:-subprocess}
mkcfg() { # file lines...
	f=$1; shift
	mkdir -p "$(dirname "$f")"
	{ printf 'start_method: %s\n' "$sm"; for l in "$@"; do printf '%s\n' "$l"; done; } >"$f"
}
# a makefile that prints its level and the configuration in force
stats_mk() { # file [recipe]
	mkdir -p "$(dirname "$1")"
	write_mk "$1" <<EOF2
load @PLUGIN@
\$(async-try x,true)
\$(async-wait)
\$(info level=\$(MAKELEVEL) \$(filter workers=% config=%,\$(async-stats)))
all: ; ${2:-@:}
EOF2
}

# run_in DIR [make args...]: run_make, but in DIR (./out, ./err stay here)
run_in() {
	tl_dir=$1; shift
	make_status=0
	(cd "$tl_dir" && exec timeout -k 5 60 "$MAKE_UT" "$@") >out 2>err || make_status=$?
}

# The layout: the user starts make in start/, which points -C at tree/
# (someone else's tree, as /lib/modules/.../build is); tree/ has its own
# asynccompile.yaml, and so has its subdirectory sub/.
mkdir start tree
mkcfg start/asynccompile.yaml "workers: 3"
mkcfg tree/asynccompile.yaml "workers: 4"
mkcfg tree/sub/asynccompile.yaml "workers: 5"
stats_mk tree/Makefile '@$(MAKE) -s -C sub'
stats_mk tree/sub/Makefile

run_in start -s -C ../tree
ok "make -C: exits 0" expect_make_ok
ok "make -C DIR reads asynccompile.yaml where make started, not DIR's" \
	expect_grep "^level=0 workers=3 config=$TRASH/start/asynccompile.yaml\$" out
ok "a sub-make started with -C by a recipe reads the same file" \
	expect_grep "^level=1 workers=3 config=$TRASH/start/asynccompile.yaml\$" out

# the same through a shell (a recipe line make does not exec itself)
stats_mk tree/Makefile '@cd . && $(MAKE) -s -C sub && :'
run_in start -s -C ../tree
ok "a sub-make started through the shell reads it too" \
	expect_grep "^level=1 workers=3 config=$TRASH/start/asynccompile.yaml\$" out
# the shell that started make said nothing (no PWD): its own directory tells
(cd start && exec env -u PWD "$MAKE_UT" -s -C ../tree) >out 2>err
ok "without PWD, the sub-make finds where make started from its parent shell" \
	expect_grep "^level=1 workers=3 config=$TRASH/start/asynccompile.yaml\$" out

# no file where make started: the tree's is not read, nor its sub-make's
rm start/asynccompile.yaml
run_in start -s -C ../tree
ok "no file where make started: the -C tree's file is ignored" \
	expect_grep "^level=0 workers=$(nproc) config=built-in-defaults\$" out
ok "... by the sub-make too" \
	expect_grep "^level=1 workers=$(nproc) config=built-in-defaults\$" out

# started in tree/ itself, without -C: its file, by its name
run_in tree -s
ok "make started in the directory: ./asynccompile.yaml, named as such" \
	expect_grep "^level=0 workers=4 config=asynccompile.yaml\$" out

# then the user's file: $XDG_CONFIG_HOME/asynccompile/asynccompile.yaml
mkcfg "$XDG_CONFIG_HOME/asynccompile/asynccompile.yaml" "workers: 6"
run_in start -s -C ../tree
ok "no file where make started: \$XDG_CONFIG_HOME/asynccompile/asynccompile.yaml" \
	expect_grep "^level=0 workers=6 config=$XDG_CONFIG_HOME/asynccompile/asynccompile.yaml\$" out
mkcfg home/.config/asynccompile/asynccompile.yaml "workers: 7"
HOME=$TRASH/home XDG_CONFIG_HOME= run_in start -s -C ../tree
ok "XDG_CONFIG_HOME unset: ~/.config/asynccompile/asynccompile.yaml" \
	expect_grep "^level=0 workers=7 config=$TRASH/home/.config/asynccompile/asynccompile.yaml\$" out

# the first file found wins whole: no key comes from a later one
printf 'start_method: %s\n' "$sm" >start/asynccompile.yaml
run_in start -s -C ../tree
ok "the first file found wins whole: the user's workers: 6 is not merged in" \
	expect_grep "^level=0 workers=$(nproc) config=$TRASH/start/asynccompile.yaml\$" out
ASYNC_COMPILE_CONFIG=$TRASH/tree/sub/asynccompile.yaml
export ASYNC_COMPILE_CONFIG
run_in start -s -C ../tree
ok "the environment variable comes before the start directory's file" \
	expect_grep "^level=0 workers=5 config=$TRASH/tree/sub/asynccompile.yaml\$" out
unset ASYNC_COMPILE_CONFIG
rm start/asynccompile.yaml

# the worker's --print-config searches the same way
W=${ASYNC_COMPILE_WORKER:-$TEST_ROOT/worker/asynccompile-worker}
(cd start && "$W" --print-config >../printed 2>&1)
ok "--print-config: the user's file when the directory has none" \
	expect_grep "^# from: $XDG_CONFIG_HOME/asynccompile/asynccompile.yaml\$" printed
rm -r "$XDG_CONFIG_HOME/asynccompile"

# /etc/asynccompile.yaml, last: seen in a mount namespace of the test's own
mkdir etc-layer
mkcfg etc-layer/asynccompile.yaml "workers: 8"
in_etc() { # cmd...: with etc-layer/ laid over /etc
	unshare -m sh -c 'mount -t overlay overlay -o "lowerdir=$0:/etc" /etc && exec "$@"' \
		"$TRASH/etc-layer" "$@"
}
if [ "$(id -u)" = 0 ] && in_etc test -f /etc/asynccompile.yaml 2>/dev/null; then
	(cd start && in_etc "$MAKE_UT" -s -C ../tree) >out 2>err
	ok "nothing else: /etc/asynccompile.yaml" \
		expect_grep "^level=0 workers=8 config=/etc/asynccompile.yaml\$" out
	mkcfg "$XDG_CONFIG_HOME/asynccompile/asynccompile.yaml" "workers: 6"
	(cd start && in_etc "$MAKE_UT" -s -C ../tree) >out 2>err
	ok "the user's file comes before /etc's" \
		expect_grep "^level=0 workers=6 config=$XDG_CONFIG_HOME/asynccompile/asynccompile.yaml\$" out
	rm -r "$XDG_CONFIG_HOME/asynccompile"
	# root's /etc file configures another user; root's file elsewhere does not
	if stage_as_nobody; then
		mkdir "$STAGE/d" && chmod 777 "$STAGE/d"
		in_etc setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
			env HOME=/nonexistent XDG_CONFIG_HOME= sh -c 'cd "$0" && exec "$1" --print-config' \
			"$STAGE/d" "$STAGE/worker/asynccompile-worker" >printed 2>&1
		ok "another user: root's /etc/asynccompile.yaml is trusted" \
			expect_grep "^# from: /etc/asynccompile.yaml\$" printed
		cp etc-layer/asynccompile.yaml "$STAGE/d/asynccompile.yaml"
		chmod 644 "$STAGE/d/asynccompile.yaml"
		in_etc setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
			env HOME=/nonexistent XDG_CONFIG_HOME= sh -c 'cd "$0" && exec "$1" --print-config' \
			"$STAGE/d" "$STAGE/worker/asynccompile-worker" >printed 2>&1
		ok "another user: root's ./asynccompile.yaml is refused, named" \
			expect_grep "^asynccompile-worker: asynccompile.yaml: refused: owned by another user (uid 0)" printed
	else
		skip "$stage_why"
		skip "$stage_why"
	fi
else
	skip "cannot lay a file over /etc in a mount namespace (needs root and unshare)"
	skip "cannot lay a file over /etc in a mount namespace (needs root and unshare)"
	skip "cannot lay a file over /etc in a mount namespace (needs root and unshare)"
	skip "cannot lay a file over /etc in a mount namespace (needs root and unshare)"
fi

# a file others can write, or another user owns, stops make, named
mkcfg start/asynccompile.yaml "workers: 3"
chmod 666 start/asynccompile.yaml
run_in start -s -C ../tree
ok "a file others may write: make stops (exit 2)" expect_eq 2 "$make_status" "make's exit status"
ok "... with the file's name and the cure" \
	expect_grep "async-try: $TRASH/start/asynccompile.yaml: refused: group or others may write to it (chmod go-w " err
chmod 644 start/asynccompile.yaml
if [ "$(id -u)" = 0 ]; then
	chown nobody start/asynccompile.yaml
	run_in start -s -C ../tree
	ok "another user's file: make stops, naming it" \
		expect_grep "async-try: $TRASH/start/asynccompile.yaml: refused: owned by another user" err
	chown 0 start/asynccompile.yaml
else
	skip "chown to another user needs root"
fi

# a relative trace: goes where make started, not into the -C tree
mkcfg start/asynccompile.yaml "trace: build-trace.json"
run_in start -s -C ../tree
ok "trace: relative: make exits 0" expect_make_ok
ok "a relative trace: is written where make started" test -s start/build-trace.json
ok "... and nothing into the tree -C named" sh -c '! ls tree/build-trace.json tree/sub/build-trace.json 2>/dev/null'

done_testing
