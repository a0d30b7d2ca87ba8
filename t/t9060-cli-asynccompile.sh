#!/bin/sh
# The asynccompile command (asynccompile(1)): ccache's option names for
# the store's counts (-s, -z), clearing the cache and the speculation
# records (-C), the configuration in force and its origins (-p), -V, -h,
# and the counts each make adds to the store's stats file at exit.
. "$(dirname "$0")/lib.sh"

# the command of the build under test (build/asan/cli/... beside its worker)
CLI=$TEST_ROOT/cli/asynccompile
if [ -n "${ASYNC_COMPILE_WORKER:-}" ]; then
	c=$(dirname "$(dirname "$ASYNC_COMPILE_WORKER")")/cli/asynccompile
	[ -x "$c" ] && CLI=$c
fi
[ -x "$CLI" ] || skip_all "$CLI not built (run make)"
store=$XDG_CACHE_HOME/asynccompile

cli() { # args... -> ./cli.out ./cli.err, status in $cli_status
	cli_status=0
	"$CLI" "$@" >cli.out 2>cli.err || cli_status=$?
}
expect_cli() { # status: the command exited so
	[ "$cli_status" -eq "$1" ] && return 0
	echo "asynccompile exited $cli_status, not $1"; sed 's/^/  out| /' cli.out
	sed 's/^/  err| /' cli.err; return 1
}
# the value of a line of -s ("hits   4" -> 4)
shown() { sed -n "s/^$1  *\([0-9][0-9.]*\).*/\1/p" cli.out | head -n1; }
expect_shown() { # label value...: -s shows these
	while [ $# -ge 2 ]; do
		expect_eq "$2" "$(shown "$1")" "$1" || { sed 's/^/  | /' cli.out; return 1; }
		shift 2
	done
}
cfg() { # YAML lines: the config the makes and the command find
	{
		[ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"
		for l; do echo "$l"; done
	} >"$TRASH/run.yaml"
	ASYNC_COMPILE_CONFIG=$TRASH/run.yaml
	export ASYNC_COMPILE_CONFIG
}

# ---- the options that touch nothing ----
cli -h
ok "-h: usage on stdout, exit 0" sh -c '[ "$0" -eq 0 ] && grep -q "^usage: asynccompile" cli.out &&
	grep -q -- "--show-stats" cli.out && ! [ -s cli.err ]' "$cli_status"
cli --help
ok "--help: the same" sh -c '[ "$0" -eq 0 ] && grep -q "^usage: asynccompile" cli.out' "$cli_status"
cli -V
ok "-V: the version" sh -c '[ "$0" -eq 0 ] && grep -qx "asynccompile [0-9.]* (protocol [0-9]*)" cli.out' "$cli_status"
cli --version
ok "--version: the same" sh -c '[ "$0" -eq 0 ] && grep -q "^asynccompile [0-9]" cli.out' "$cli_status"
cli -x
ok "an unknown option: usage on stderr, exit 2" sh -c '[ "$0" -eq 2 ] && ! [ -s cli.out ] &&
	grep -q "unknown option .-x." cli.err && grep -q "^usage: asynccompile" cli.err' "$cli_status"
cli --bogus
ok "an unknown long option: exit 2, named" sh -c '[ "$0" -eq 2 ] && grep -q "unknown option .--bogus." cli.err' "$cli_status"
cli -s stray
ok "an argument: exit 2, and -s did not run" sh -c '[ "$0" -eq 2 ] && ! [ -s cli.out ] &&
	grep -q "unexpected argument .stray." cli.err' "$cli_status"
cli
ok "no option: usage on stderr, exit 2" sh -c '[ "$0" -eq 2 ] && grep -q "^usage:" cli.err' "$cli_status"

cfg "cache: true" "speculate: false"
cli -s
ok "-s with no store yet: exit 0" expect_cli 0
ok "-s with no store yet: zeros, and says so" sh -c 'grep -q "(none yet)" cli.out &&
	grep -q "^hits  *0$" cli.out && grep -q "^misses  *0$" cli.out && grep -q "^stats updated  *never$" cli.out'
ok "-s with no store yet: creates nothing" test ! -e "$store"

# a make that loads the plugin and asks for nothing leaves the store alone
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: ; @:
EOF2
run_make
ok "a make that queues nothing: no stats file" sh -c '[ "$0" -eq 0 ] && ! [ -e "$1/stats" ]' "$make_status" "$store"

# ---- the counts across makes: hits and misses ----
# A: pure, 0.2 s; B: the same command again (the memo); C reads the clock
# (opaque); D writes a file that outlives it (impure); T a probe.
write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell sleep 0.2; echo a)
B := $(async-shell sleep 0.2; echo a)
C := $(async-shell date +%s%N)
D := $(async-shell echo d >made.txt; echo d)
$(async-try T,true)
$(async-wait T)
$(info answers: $(A) $(B) $(D) $(T.status))
all: ; @:
EOF2
run_make
ok "first make: succeeds" expect_make_ok
ok "first make: its answers" expect_grep '^answers: a a d 0$' out
cli -s
ok "after one make: -s exits 0" expect_cli 0
ok "after one make: 1 hit (the memo), 4 misses, 1 opaque, 1 impure" \
	expect_shown hits 1 "  memo" 1 "  cache" 0 misses 4 "  opaque runs" 1 "  impure runs" 1
ok "after one make: stats updated is a date" expect_grep '^stats updated  *[0-9][0-9-]* [0-9:]*$' cli.out
run_make
ok "second make: succeeds, same answers" sh -c '[ "$0" -eq 0 ] && grep -q "^answers: a a d 0$" out' "$make_status"
cli -s
ok "after two makes: the counts add up (cache 2, memo 2, misses 6, opaque 2, impure 2)" \
	expect_shown hits 4 "  cache" 2 "  memo" 2 "  speculation" 0 misses 6 \
	"  opaque runs" 2 "  impure runs" 2
saved_ms() { shown "time saved" | tr -d .; }
ok "time saved: at least the 0.2 s of A three times (memo twice, cache once)" \
	sh -c '[ "$(echo "$0" | sed "s/^0*//")" -ge 600 ] || { echo "saved $0 ms"; exit 1; }' "$(saved_ms)"
ok "-s shows the cache's entries" sh -c 'grep -q "^cache  *entries=[1-9][0-9]* bytes=[1-9]" cli.out'

# two makes at once: neither's counts are lost (the lock; answer/stats.h)
write_mk two.mk <<'EOF2'
load @PLUGIN@
X := $(async-shell echo $(N))
all: ; @:
EOF2
N=1 "$MAKE_UT" -f two.mk >two.1 2>&1 &
p1=$!
N=2 "$MAKE_UT" -f two.mk >two.2 2>&1 &
p2=$!
wait $p1; s1=$?; wait $p2; s2=$?
cli -s
ok "two makes at once: both succeed, both counted" \
	sh -c '[ "$0 $1" = "0 0" ] && [ "$2" = 8 ] || { echo "status $0 $1, misses $2"; exit 1; }' \
	"$s1" "$s2" "$(shown misses)"

# ---- -z ----
cli -s -z
ok "-s -z: shows, then zeroes" sh -c '[ "$0" -eq 0 ] && grep -q "^misses  *8$" cli.out &&
	grep -q "^statistics zeroed in " cli.out' "$cli_status"
cli --show-stats
ok "after -z: every count 0" expect_shown hits 0 misses 0 "  opaque runs" 0 "  impure runs" 0
ok "after -z: the time saved is 0" expect_grep '^time saved  *0\.000 s$' cli.out
ok "after -z: stats zeroed is a date" expect_grep '^stats zeroed  *[0-9][0-9-]* [0-9:]*$' cli.out
ok "after -z: the cache is still there" expect_grep '^cache  *entries=[1-9]' cli.out
run_make
cli -s
ok "a make after -z: cache hits again, counted from zero" expect_shown hits 3 "  cache" 2 "  memo" 1 misses 2
cli --zero-stats
ok "--zero-stats: the same" sh -c '[ "$0" -eq 0 ] && "$1" -s | grep -q "^hits  *0$"' "$cli_status" "$CLI"

# ---- speculation, then -C ----
cfg "cache: true" "speculate: true"
write_mk spec.mk <<'EOF2'
load @PLUGIN@
S := $(async-shell sleep 0.1; echo spec)
$(info answers: $(S))
all: ; @:
EOF2
run_make -f spec.mk
run_make -f spec.mk
cli -s
ok "speculation: the second make's answer came from the job run ahead" \
	sh -c '[ "$(sed -n "s/^  speculation  *//p" cli.out)" -ge 1 ] || cat cli.out'
ok "speculation: a record in the store" sh -c 'ls "$0"/rec-* >/dev/null' "$store"
ok "-s counts the records" expect_grep '^speculation records  *entries=[1-9][0-9]* bytes=[1-9]' cli.out
ncache=$(ls "$store"/cache | grep -c '^c-')
nrec=$(ls "$store" | grep -c '^rec-')
cli -C
ok "-C: says what it removed" sh -c '[ "$0" -eq 0 ] &&
	grep -qx "removed $1 cache entries and $2 speculation records from $3" cli.out || cat cli.out cli.err' \
	"$cli_status" "$ncache" "$nrec" "$store"
ok "-C: no cache entry and no record left" \
	sh -c '! ls "$0"/cache | grep -q "^c-" && ! ls "$0" | grep -q "^rec-"' "$store"
cli -s
ok "-C: the counts are left alone" sh -c 'grep -q "^  speculation  *[1-9]" cli.out || cat cli.out'
cli -z
run_make -f spec.mk
cli -s
ok "a make after -C: runs the command again (a miss, no hit)" expect_shown misses 1 hits 0
cli --clear
ok "--clear: the same" sh -c '[ "$0" -eq 0 ] && grep -q "^removed 1 cache entries and 1 speculation records" cli.out' "$cli_status"

# ---- a hostile stats file ----
printf 'asynccompile-stats 1\nmisses 12\nbogus 1\n' >"$store/stats"
cli -s
ok "a malformed stats file: -s exits 0 and shows zeros" sh -c '[ "$0" -eq 0 ] && grep -q "^misses  *0$" cli.out' "$cli_status"
ok "... saying why on stderr" expect_grep 'stats file, line 3: unknown counter' cli.err
run_make -f spec.mk
cli -s
ok "the next make starts the file again from its own counts" \
	sh -c '[ "$0" -eq 0 ] && ! [ -s cli.err ] && grep -q "^misses  *1$" cli.out' "$cli_status"
chmod 666 "$store/stats"
cli -s
ok "a stats file others may write: refused, zeros" sh -c 'grep -q "refused" cli.err && grep -q "^misses  *0$" cli.out'
chmod 600 "$store/stats"

# ---- a store others may write: refused, not taken for "none yet" ----
chmod 777 "$store"
cli -s
ok "a store others may write: -s exits 1, saying it is refused" \
	sh -c '[ "$0" -eq 1 ] && grep -q "refused: group or others may write" cli.err' "$cli_status"
cli -C
ok "... and -C exits 1, removing nothing" \
	sh -c '[ "$0" -eq 1 ] && ls "$1"/cache | grep -q "^c-"' "$cli_status" "$store"
chmod 700 "$store"

# ---- -p ----
printf 'workers: 3\n# a comment\ncache: true\n' >asynccompile.yaml
(unset ASYNC_COMPILE_CONFIG; cli -p; echo "$cli_status" >cli.status)
ok "-p: the file found here, exit 0" sh -c '[ "$(cat cli.status)" -eq 0 ] && grep -qx "# from: asynccompile.yaml" cli.out'
ok "-p: each value set by the file names its line" \
	sh -c 'grep -qx "workers: 3  # asynccompile.yaml:1" cli.out && grep -qx "cache: true  # asynccompile.yaml:3" cli.out || cat cli.out'
ok "-p: the others say default" \
	sh -c 'grep -qx "speculate: true  # default" cli.out && grep -qx "env: {}  # default" cli.out || cat cli.out'
ok "-p: every key says where it came from" \
	sh -c '[ "$(grep -vc "^#\|  # " cli.out)" -eq 0 ] || grep -v "^#\|  # " cli.out'
cp cli.out printed.yaml
(ASYNC_COMPILE_CONFIG=$TRASH/printed.yaml; export ASYNC_COMPILE_CONFIG; cli --show-config)
ok "--show-config: what -p prints loads back to the same values" \
	expect_eq "$(sed -e '/^#/d' -e 's/  #.*//' printed.yaml)" "$(sed -e '/^#/d' -e 's/  #.*//' cli.out)"
ok "-p: the last line names the search's step that found the file" \
	sh -c 'tail -n1 printed.yaml | grep -qx "# found by the search: the directory make was started from" &&
	tail -n1 cli.out | grep -qx "# found by the search: the environment variable ASYNC_COMPILE_CONFIG" || tail -n1 printed.yaml cli.out'
cfg "workers: 2"
cli -p
ok "-p: ASYNC_COMPILE_CONFIG wins over ./asynccompile.yaml" \
	sh -c 'grep -qx "workers: 2  # $0:[0-9]*" cli.out || cat cli.out' "$TRASH/run.yaml"
printf 'worker: 3\n' >bad.yaml
(ASYNC_COMPILE_CONFIG=bad.yaml; export ASYNC_COMPILE_CONFIG; cli -p; echo "$cli_status" >cli.status)
ok "-p on a bad file: exit 1, the message make would give" \
	sh -c '[ "$(cat cli.status)" -eq 1 ] && grep -q "^asynccompile: bad.yaml:1:1: unknown key" cli.err || cat cli.err'

done_testing
