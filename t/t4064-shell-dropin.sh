#!/bin/sh
# The drop-in stays a drop-in: what $(shell) gives in a corner, so does
# $(async-shell), first run, memo, speculation and cache alike (issue 29,
# items 1, 8, 9 and 11).  Each case runs the same makefile once with
# $(shell) in a directory of its own ("sh") and once with $(async-shell)
# ("as"), as t4062 does, and compares.
. "$(dirname "$0")/lib.sh"

mkdir sh as
cfg() { # cache: true or false, as c.yaml in both directories
	for d in sh as; do
		{ [ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"
		  echo "cache: $1"; } >$d/c.yaml
	done
}
# run_both ARGS: make in each directory (under `ulimit -n $NOFILE` when
# set); outputs in sh.out/as.out (async-stats lines apart, in as.stats),
# statuses in sh_status/as_status.
NOFILE=
run_both() {
	for d in sh as; do
		(cd $d && { [ -z "$NOFILE" ] || ulimit -n "$NOFILE"; } && run_make "$@"
		 echo "$make_status" >.status)
		grep -v '^STATS ' $d/out >$d.out; cp $d/err $d.err
	done
	grep '^STATS ' as/out >as.stats
	sh_status=$(cat sh/.status); as_status=$(cat as/.status)
}
same_answers() {
	expect_eq "$sh_status" "$as_status" "make's status (\$(shell) vs async-shell)" &&
	expect_eq "$(cat sh.out)" "$(cat as.out)" "output (\$(shell) vs async-shell)" &&
	expect_no_grep 'asynccompile: cannot run' as.err
}
stat_of() { # key: its value on the last STATS line of the async-shell run
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" as.stats | tail -n1
}
stat_ge() { # key min
	[ "$(stat_of "$1")" -ge "$2" ] && return 0
	echo "$1=$(stat_of "$1"), wanted >= $2:"; cat as.stats; return 1
}

# -- item 1: the log's descriptor under a low RLIMIT_NOFILE.  The log
# went to descriptor 1021 whatever the limit, and posix_spawn refused
# every command ("cannot run '/bin/sh': Bad file descriptor", 127).
# At 16, make with two spawn or fork workers has two descriptors left
# when W (it writes a file: never run ahead) runs in make's process: as
# for $(shell), enough for its stdout pipe; its stderr is make's then.
variant_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
A := $(FN echo hello)
$(info A=[$(A)] status=$(.SHELLSTATUS))
B := $(FN echo out; exit 3)
$(info B=[$(B)] status=$(.SHELLSTATUS))
C := $(FN cat in.txt)
$(info C=[$(C)] status=$(.SHELLSTATUS))
F := $(FN if [ "$$(cat in.txt)" = strong ]; then echo -fstack-protector-strong; fi)
$(info F=[$(F)] status=$(.SHELLSTATUS))
$(info memo=[$(FN echo hello)] status=$(.SHELLSTATUS))
W := $(FN echo y >written.txt; echo w; echo to-stderr >&2)
$(info W=[$(W)] status=$(.SHELLSTATUS))
all: ; @echo STATS $(async-stats)
EOF2
for d in sh as; do echo strong >$d/in.txt; done
settle
for lim in 1021 64 16; do
	for cache in false true; do
		cfg $cache
		rm -rf "$XDG_CACHE_HOME"
		NOFILE=$lim
		run_both
		ok "ulimit -n $lim, cache $cache, first run: \$(shell)'s answers and statuses" same_answers
		ok "ulimit -n $lim, cache $cache, first run: the memo answered" stat_ge memo_hits 1
		run_both
		ok "ulimit -n $lim, cache $cache, second run: \$(shell)'s answers" same_answers
		if [ $cache = true ]; then
			ok "ulimit -n $lim, cache true, second run: answered by the cache" \
				stat_ge cache_hits 4
		else
			ok "ulimit -n $lim, cache false, second run: answered by speculation" \
				stat_ge spec_hits 4
		fi
		NOFILE=
	done
done
rm -rf sh/* as/*

# -- item 9: ASYNC_COMPILE_DEBUG is in the command's environment, so it
# is compared like any other variable (it was left out, and a command
# that printed it was answered stale).  The memo: make 4.4 gives $(shell)
# the makefile's exports, so the second call sees the new value.
variant_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
$(info D=[$(FN printf %s "$$ASYNC_COMPILE_DEBUG")])
$(info M=[$(FN echo $$ASYNC_COMPILE_DEBUG)])
export ASYNC_COMPILE_DEBUG = in-makefile
$(info memo=[$(FN echo $$ASYNC_COMPILE_DEBUG)])
all: ; @echo STATS $(async-stats)
EOF2
for cache in false true; do
	cfg $cache
	rm -rf "$XDG_CACHE_HOME"
	for v in unset 1 2 unset; do
		if [ $v = unset ]; then
			run_both
		else
			ASYNC_COMPILE_DEBUG=$v run_both
		fi
		ok "cache $cache, ASYNC_COMPILE_DEBUG $v: \$(shell)'s answers" same_answers
	done
done
rm -rf sh/* as/*

# -- item 11: output after the command's process has exited.  $(shell)
# reads stdout to its end: "early late"; async-shell stopped 1 s after
# the exit ("early"), with a note.  The background writer waits on the
# fifo `go`, which the test opens (read-write: it never blocks) only once
# make has either ended (the old runner) or waited for 2.5 s: the answer
# must not depend on when that is.
release_run() { # dir args: make in dir, `go` opened only after a while
	(cd "$1" && shift && run_make "$@"; echo "$make_status" >.status) &
	tl_mk=$!
	tl_i=0
	while kill -0 $tl_mk 2>/dev/null && [ $tl_i -lt 50 ]; do
		tl_i=$((tl_i + 1)); sleep 0.05
	done
	exec 7<>"$1/go"
	echo go >&7
	wait $tl_mk
	exec 7>&-
}
run_released() {
	for d in sh as; do
		release_run $d "$@"
		grep -v '^STATS ' $d/out >$d.out; cp $d/err $d.err
	done
	grep '^STATS ' as/out >as.stats
	sh_status=$(cat sh/.status); as_status=$(cat as/.status)
}
fifo_case() { # command: a makefile printing [its answer], the fifo `go`, a fresh store
	variant_mk Makefile <<EOF2
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
\$(info [\$(FN $1)])
all: ; @echo STATS \$(async-stats)
EOF2
	both mkfifo go
	cfg false
	rm -rf "$XDG_CACHE_HOME"
}
same_no_note() {
	same_answers && expect_no_grep 'still open' as.err
}
fifo_case '(read x <go; echo late) & echo early'
for run in first second; do
	run_released
	ok "a background process writes after the exit, $run run: \$(shell)'s answer" \
		expect_grep '^\[early late\]$' as.out
	ok "$run run: the same as \$(shell), and no note" same_no_note
done
rm -rf sh/* as/*

# The same in a pool worker: a pure command (no fifo: it would be an
# input without identity) is speculated on the second run.  The sleep is
# the command under test, not a wait: any length gives the same answer.
variant_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
$(info [$(FN (sleep 0.3; echo late) & echo early)])
all: ; @echo STATS $(async-stats)
EOF2
cfg false
rm -rf "$XDG_CACHE_HOME"
run_both
run_both
ok "speculated: the output after the exit is read, as \$(shell) reads it" \
	expect_grep '^\[early late\]$' as.out
ok "speculated: the same as \$(shell), and no note" same_no_note
ok "speculated: the answer was the pool's" stat_ge spec_hits 1
rm -rf sh/* as/*

# The background process closes stdout and keeps running: $(shell) returns
# at once and leaves it running (it still holds stderr), and so must
# async-shell; it ends when the test opens `go`.
fifo_case '(exec >&-; read x <go; echo bye >bye.txt) & echo early'
for run in first second; do
	run_both
	ok "stdout closed, $run run: make returned without the background process" \
		expect_grep '^\[early\]$' as.out
	ok "$run run: the same as \$(shell), and no note" same_no_note
	for d in sh as; do exec 7<>$d/go; echo go >&7; done
	ok "$run run: the background process was left running, as \$(shell) leaves it" \
		wait_until test -f sh/bye.txt -a -f as/bye.txt
	exec 7>&-
	rm -f sh/bye.txt as/bye.txt
done
rm -rf sh/* as/*

# -- item 8: $PPID is make's pid under $(shell); a speculated command ran
# in a pool worker and saw the worker's.  Both functions in one make, so
# the same pid is the right answer; a process the command starts sees its
# real parent (not make).
write_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
$(info sh=$(shell echo $$PPID) as=$(async-shell echo $$PPID) memo=$(async-shell echo $$PPID))
$(info inner=$(async-shell sh -c 'echo $$PPID') make=$(shell echo $$PPID))
$(info env=$(async-shell env | sed -n '/^ASYNCCOMPILE_PPID=/p'))
all: ; @echo STATS $(async-stats)
EOF2
cfg false
cp as/c.yaml .
rm -rf "$XDG_CACHE_HOME"
ppid_same() {
	set -- $(sed -n 's/^sh=\([0-9]*\) as=\([0-9]*\) memo=\([0-9]*\)$/\1 \2 \3/p' out)
	[ $# = 3 ] && [ "$1" = "$2" ] && [ "$2" = "$3" ] && return 0
	echo "not make's pid throughout:"; cat out; return 1
}
inner_not_make() {
	set -- $(sed -n 's/^inner=\([0-9]*\) make=\([0-9]*\)$/\1 \2/p' out)
	[ $# = 2 ] && [ "$1" != "$2" ] && return 0
	echo "a child of the command saw make as its parent:"; cat out; return 1
}
for run in first second third; do
	run_make
	grep '^STATS ' out >as.stats
	ok "\$PPID, $run run: make's pid, as \$(shell) gives it (memo too)" ppid_same
	ok "\$PPID, $run run: a child of the command sees its real parent" inner_not_make
	ok "\$PPID, $run run: the runner's variable is not in the command's environment" \
		expect_grep '^env=$' out
done
ok "\$PPID: the later runs were answered by speculation" stat_ge spec_hits 1
# With the cache on, an answer that names make's pid (its $PPID) is not
# kept: the next make has another pid.
cfg true
cp as/c.yaml .
for run in first second; do
	run_make
	ok "\$PPID with the cache, $run run: this make's pid" ppid_same
done

done_testing
