#!/bin/sh
# test: per-start-method
# A sub-make is killed (INT, TERM or KILL) while the commands it
# speculates at load hold tokens of the top-level make's jobserver
# (issue 29, item 10).  Stock make's sub-make holds no token while its
# $(shell) runs, so the top-level make keeps its -j2; with async-shell
# every token the sub-make took must come back too, SIGKILL included
# (which runs no handler in make), none twice, and nothing of the
# sub-make's may outlive the hand-back.
#
# The same makefiles run with $(shell) in sh/ (the baseline) and with
# $(async-shell) in as/.  Per case: two runs record the sub-make's
# two commands (they end at once); in the third they block (on a lock
# the test holds), so in as/ both run at once, on the sub-make's implicit slot and
# on the top-level make's one token, when the test kills the sub-make.
# Then the top-level make runs two jobs that must run at once (a
# barrier: only two slots let both through) and, alone, counts the
# tokens in its jobserver: exactly one (-j2), none lost, none invented.
. "$(dirname "$0")/lib.sh"

M=1247.$$ # unique to this run
write_config "workers: 2"

mkdir sh as
variant_mk() { # file: stdin with FN replaced, into both directories
	tl_text=$(cat)
	printf '%s\n' "$tl_text" | sed 's/FN/shell/g' | write_mk "sh/$1"
	printf '%s\n' "$tl_text" | sed 's/FN/async-shell/g' | write_mk "as/$1"
}
# make.pid: the sub-make (the parent of $(shell)'s shell).  The commands
# wait for a lock on $LK, which the test holds while they must block.
LK=lk.$M
variant_mk sub.mk <<EOF2
load @PLUGIN@
PID := \$(shell echo \$\$PPID >make.pid)
A := \$(FN $TEST_HELPERDIR/lockwait $LK; echo a)
B := \$(FN $TEST_HELPERDIR/lockwait $LK; echo b)
all: ; @:
EOF2
# sub's second line waits for the test's word when ./gate is a fifo
for d in sh as; do
	{
		echo 'all: count'
		printf 'count: a b ; +@%s >count\n' "$TEST_HELPERDIR/jscount.py"
		printf 'a: sub ; @%s\n' "$(barrier_cmd log bar 2 a)"
		printf 'b: sub ; @%s\n' "$(barrier_cmd log bar 2 b)"
		printf 'sub:\n\t+@$(MAKE) -s -f sub.mk || true\n'
		printf '\t@if [ -p gate ]; then cat gate >/dev/null; fi\n'
	} >$d/Makefile
	: >$d/"$LK"
done
settle

dead() { ! alive "$1"; }
# the processes in ./kids (the sub-make's children when it was killed)
kids_gone() {
	for p in $(cat kids); do
		alive "$p" && { echo "still alive: $(ps -o pid,args= -p "$p")"; return 1; }
	done
	return 0
}
top_ok() { # status of the top-level make
	[ "$1" -eq 0 ] && ! grep -q INTERNAL err && [ ! -e bar.timeout ] && return 0
	echo "top-level make: status $1"; echo "stdout:"; sed 's/^/  | /' out
	echo "stderr:"; sed 's/^/  | /' err; ls bar bar.timeout 2>/dev/null
	return 1
}

# guarded: one of ./kids is the sub-make's token guard
guarded() {
	for p in $(cat kids); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "--guard $sub " && return 0
	done
	echo "no token guard among the sub-make's children:"; ps -o pid,args= -p "$(paste -sd, kids)"
	return 1
}
# lockwaits N: exactly N of the commands run
lockwaits() {
	[ "$(pgrep -f "^$TEST_HELPERDIR/lockwait $LK\$" | wc -l)" -eq "$1" ]
}

# record DIR STYLE [make args]: the first run records the commands, the
# second proves them pure; a killed sub-make writes no record, so this
# serves every signal's case
record() {
	d=$1 style=$2; shift 2
	cd "$d" || exit 1
	rm -f gate
	for run in 1 2; do
		rm -rf bar bar.timeout log count make.pid; mkdir bar
		run_make -j2 "$@"
	done
	ok "$d, $style jobserver: the recording runs succeed" top_ok "$make_status"
	cd ..
}

# one_case DIR STYLE SIG [make args]
one_case() {
	d=$1 style=$2 sig=$3; shift 3
	what="$d, $style jobserver, SIG$sig"
	cd "$d" || exit 1
	rm -rf bar bar.timeout log count make.pid gate; mkdir bar
	mkfifo gate
	exec 9<"$LK"
	flock 9
	timeout -k 5 60 "$MAKE_UT" -j2 "$@" >out 2>err 9<&- &
	top=$!
	# as/: both commands run, one of them on the top-level make's token
	n=1; [ "$d" = as ] && n=2
	if wait_until lockwaits "$n" && [ -s make.pid ]; then
		sub=$(cat make.pid)
		pgrep -P "$sub" >kids
		ok "$what: the sub-make runs its commands" lockwaits "$n"
		[ "$d" = as ] && ok "$what: a token guard watches the sub-make" guarded
		kill -s "$sig" "$sub"
		wait_until dead "$sub"
		# $(shell)'s command outlives a sub-make killed alone (t4063)
		[ "$d" = sh ] && exec 9<&-
		ok "$what: the sub-make's commands end" wait_until lockwaits 0
		ok "$what: nothing of the sub-make's is left" wait_until kids_gone
	else
		ok "$what: the commands start" false
		kill "$top"; : >kids
	fi
	exec 9<&-
	timeout 30 sh -c 'echo go >gate'
	wait "$top"; rc=$?
	ok "$what: the top-level make still runs two jobs at once" top_ok "$rc"
	ok "$what: exactly one token in the jobserver (none lost, none invented)" \
		expect_eq 1 "$(cat count 2>/dev/null)" "tokens left to a -j2 make"
	cd ..
}

# Every signal through make's default jobserver (4.3's pipe, 4.4's fifo);
# SIGKILL, which no handler sees, through 4.4's pipe too.  The baseline,
# stock make, for SIGKILL (the others run make's handler).
if [ "$(make_version)" = 4.3 ]; then
	style=pipe
else
	style=fifo
fi
record sh "$style"
one_case sh "$style" KILL
record as "$style"
for sig in INT TERM KILL; do
	one_case as "$style" "$sig"
done
if [ "$style" = fifo ]; then
	record as pipe --jobserver-style=pipe
	one_case as pipe KILL --jobserver-style=pipe
fi

done_testing
