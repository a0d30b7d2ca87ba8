#!/bin/sh
# Identities that can tell a change (issue 29, item 6): an answer is
# reused only while every file it read keeps the identity it had, so a
# change the identity cannot show must keep it from being reused.  Each
# case runs the same makefiles with $(shell) (directory sh) and with
# $(async-shell) (directory as, through the memo, speculation or the
# cache) and compares, as t4062 does.
#  - a file system with whole-second timestamps (ext4 made with -I 128,
#    loop-mounted: root only): a same-size rewrite, or a rename in a
#    listed directory, in the same second as the read;
#  - a store through another process's shared writable mapping, which
#    leaves size, mtime and ctime as they were;
#  - a file's access time (stat -c %X) that a read in between moved.
. "$(dirname "$0")/lib.sh"

# case_mk: the makefile of a case, its body from stdin with FN replaced,
# into both directories (nothing when they were not made: a skip)
case_mk() {
	tl_text=$(cat)
	[ -d "$sh" ] || return 0
	for tl_fn in shell async-shell; do
		tl_d=$sh
		[ $tl_fn = async-shell ] && tl_d=$as
		printf 'ASYNC_COMPILE_CONFIG := c.yaml\nload @PLUGIN@\n%s\nall: ; @:\n' "$tl_text" |
			sed "s/FN/$tl_fn/g" | write_mk "$tl_d/Makefile"
	done
}
same_answers() {
	expect_eq "$(cat "$sh/.status")" "$(cat "$as/.status")" "make's status (\$(shell) vs async-shell)" &&
	expect_eq "$(grep -v '^make' "$sh/out")" "$(grep -v '^make' "$as/out")" \
		"output (\$(shell) vs async-shell)"
}
make_here() { # args: run_make in the current directory, status kept in .status
	run_make "$@"
	echo "$make_status" >.status
}
in_dir() { # DIR CASE: the function CASE run in DIR
	(cd "$1" && $2)
}
# each_dir RUNNER CASE: RUNNER DIR CASE for as/, then sh/, each with an
# empty store
each_dir() {
	for tl_d in "$as" "$sh"; do
		rm -rf "$XDG_CACHE_HOME/asynccompile"
		"$1" "$tl_d" "$2"
	done
}
cfg() { # YAML lines: the config both directories' makes use
	[ -d "$sh" ] || return 0
	for d in "$sh" "$as"; do
		{
			[ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"
			for l; do echo "$l"; done
		} >"$d/c.yaml"
	done
}

# ---- whole-second timestamps ----

mnt=$TRASH/mnt
sh=$mnt/sh as=$mnt/as
mount_why=
if [ "$(id -u)" != 0 ]; then
	mount_why="needs root to loop-mount an ext4 with 1-second timestamps"
elif ! command -v mkfs.ext4 >/dev/null 2>&1; then
	mount_why="no mkfs.ext4"
elif ! { truncate -s 16M "$TRASH/img" && mkfs.ext4 -q -F -I 128 "$TRASH/img" >/dev/null 2>&1 &&
	 mkdir "$mnt" && mount -o loop "$TRASH/img" "$mnt"; } 2>/dev/null; then
	mount_why="cannot loop-mount an ext4 made with -I 128 here"
fi
if [ -z "$mount_why" ]; then
	trap 'umount "$mnt" 2>/dev/null || umount -l "$mnt"; test_cleanup' EXIT
	mkdir "$sh" "$as"
	touch "$mnt/probe"
	case $(stat -c %y "$mnt/probe") in
	*.000000000*) ;;
	*) mount_why="an ext4 made with -I 128 keeps sub-second timestamps here" ;;
	esac
fi

# in_one_second CASE PATH: run the function CASE in as/, then in sh/.
# CASE changes PATH, marks (stat -c %Z PATH >.t0) and goes on to make and
# change it again; a try counts only if PATH's ctime is still that
# second at the end, so every change in it fell into one second of the
# file system (the case then tests what it means to).  Up to 20 tries;
# $in_one says whether one counted.
in_one_second() {
	in_one=
	for try in $(seq 20); do
		rm -rf "$XDG_CACHE_HOME/asynccompile"
		in_dir "$as" "$1"
		if [ "$(cat "$as/.t0")" = "$(stat -c %Z "$as/$2")" ]; then
			in_one=1
			break
		fi
	done
	rm -rf "$XDG_CACHE_HOME/asynccompile"
	in_dir "$sh" "$1"
}
# ok_one_second DESCRIPTION CASE PATH
ok_one_second() {
	if [ -n "$mount_why" ]; then
		skip "$1: $mount_why"
		return
	fi
	in_one_second "$2" "$3"
	if [ -z "$in_one" ]; then
		skip "$1: twenty tries each crossed a second (machine too slow)"
		return
	fi
	ok "$1" same_answers
}

cfg
case_mk <<'EOF2'
X := $(FN cat f)
$(shell printf B >f)
Y := $(FN cat f)
$(info X=$(X) Y=$(Y))
EOF2
memo_rewrite() {
	printf A >f && stat -c %Z f >.t0 && make_here
}
ok_one_second "1-second fs, memo: a same-size rewrite in the second of the read" \
	memo_rewrite f

case_mk <<'EOF2'
X := $(FN ls d)
$(shell mv d/a d/b)
Y := $(FN ls d)
$(info X=$(X) Y=$(Y))
EOF2
memo_rename() {
	rm -rf d && mkdir d && touch d/a && stat -c %Z d >.t0 && make_here
}
ok_one_second "1-second fs, memo: a rename in a listed directory in the second of the listing" \
	memo_rename d

# speculation: a first make rewrites f and reads it; the next make
# speculates the read at load, rewrites f (same size) and asks, all in
# one second (the sleep lets the speculated read come first, as in
# t4062, in the second make only; the answers do not depend on it)
case_mk <<'EOF2'
$(shell if [ -e slow ]; then sleep 0.2; fi; cat next >f)
X := $(FN cat f)
$(info X=$(X))
EOF2
spec_rewrite() {
	rm -f slow && printf A >f && printf A >next && stat -c %Z f >.t0 && make_here &&
	printf B >next && touch slow && make_here
}
cfg
ok_one_second "1-second fs, speculation: a same-size rewrite after the speculated read" \
	spec_rewrite f

# the cache: a first make reads f, f is rewritten (same size), a second
# make asks again, all in one second
case_mk <<'EOF2'
X := $(FN cat f)
$(info X=$(X))
EOF2
cache_rewrite() {
	printf A >f && stat -c %Z f >.t0 && make_here && printf B >f && make_here
}
cfg "cache: true" "speculate: false"
ok_one_second "1-second fs, the cache: a same-size rewrite between two makes" \
	cache_rewrite f

# ---- a store through another process's shared writable mapping ----

MAPSTORE=$TEST_HELPERDIR/mapstore
case $MAPSTORE in /*) ;; *) MAPSTORE=$TEST_CWD/$MAPSTORE ;; esac
# with_mapper DIR CASE: in DIR, mapstore on f (made "A" if absent) driven
# from descriptors 3 (a line: store its first byte) and 4 ("ok" once
# stored), then CASE, then the mapper is told to end and waited for.
with_mapper() {
	(
		cd "$1" || exit 1
		[ -e f ] || printf A >f
		rm -f cmd ack && mkfifo cmd ack || exit 1
		"$MAPSTORE" f <cmd >ack &
		mapper=$!
		exec 3>cmd 4<ack
		$2
		exec 3>&- 4<&-
		wait "$mapper"
	)
}
store() { # byte: the mapper stores it, and has when this returns
	echo "$1" >&3 && read -r tl_ack <&4
}

if [ -x "$MAPSTORE" ]; then
	sh=$TRASH/msh as=$TRASH/mas
	mkdir "$sh" "$as"
	cfg
	case_mk <<'EOF2'
X := $(FN cat f)
$(shell echo B >cmd && read r <ack)
Y := $(FN cat f)
$(info X=$(X) Y=$(Y))
EOF2
	memo_mapped() { store A && make_here; }
	each_dir with_mapper memo_mapped
	ok "shared writable mapping, memo: a store between two reads" same_answers

	case_mk <<'EOF2'
$(shell sleep 0.2; echo $$(cat next) >cmd && read r <ack)
X := $(FN cat f)
$(info X=$(X))
EOF2
	spec_mapped() {
		store A && printf A >next && make_here && printf B >next && make_here
	}
	each_dir with_mapper spec_mapped
	ok "shared writable mapping, speculation: a store after the speculated read" same_answers

	case_mk <<'EOF2'
X := $(FN cat f)
$(info X=$(X))
EOF2
	cfg "cache: true" "speculate: false"
	cache_mapped() { store A && make_here && store B && make_here; }
	each_dir with_mapper cache_mapped
	ok "shared writable mapping, the cache: a store between two makes" same_answers
else
	for c in memo speculation cache; do
		skip "shared writable mapping, $c: no $MAPSTORE (make test-build)"
	done
fi

# ---- the access time: stat -c %X with a read in between ----

# an atime older than the mtime: the next read moves it (relatime)
old_atime() {
	printf A >f && touch -m -d @1500000000 f && touch -a -d @1000000000 f && settle
}
sh=$TRASH/ash as=$TRASH/aas
mkdir "$sh" "$as"
atime_why=
(cd "$as" && old_atime && cat f >/dev/null && [ "$(stat -c %X f)" != 1000000000 ]) ||
	atime_why="a read does not move the access time here (noatime)"
ok_atime() { # DESCRIPTION CASE
	if [ -n "$atime_why" ]; then
		skip "$1: $atime_why"
		return
	fi
	each_dir in_dir "$2"
	ok "$1" same_answers
}
cfg
case_mk <<'EOF2'
X := $(FN stat -c %X f)
$(shell cat f >/dev/null)
Y := $(FN stat -c %X f)
$(info X=$(X) moved=$(if $(filter $(X),$(Y)),no,yes))
EOF2
memo_atime() { old_atime && make_here; }
ok_atime "access time, memo: a read between two stat -c %X" memo_atime

case_mk <<'EOF2'
$(shell if [ -e slow ]; then sleep 0.2; cat f >/dev/null; fi)
X := $(FN stat -c %X f)
$(info moved=$(if $(filter 1000000000,$(X)),no,yes))
EOF2
spec_atime() { rm -f slow && old_atime && make_here && touch slow && make_here; }
ok_atime "access time, speculation: a read after the speculated stat -c %X" spec_atime

case_mk <<'EOF2'
X := $(FN stat -c %X f)
$(info moved=$(if $(filter 1000000000,$(X)),no,yes))
EOF2
cfg "cache: true" "speculate: false"
cache_atime() { old_atime && make_here && cat f >/dev/null && make_here; }
ok_atime "access time, the cache: a read between two makes" cache_atime

done_testing
