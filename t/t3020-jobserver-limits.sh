#!/bin/sh
# test: per-start-method
# Jobserver citizenship: the implicit slot, tokens for every other job,
# the -jN limit while makefiles are read, both jobserver styles, the
# deadlock MAKE-FACTS describes, and clean token accounting at exit.
. "$(dirname "$0")/lib.sh"
write_config "workers: 8"

# mk_barrier N: a makefile queueing 6 jobs at parse time that wait until
# N of them run at once (barrier_cmd): passing proves N ran together, the
# spans show no more did.
mk_barrier() {
	{
		echo "load $ASYNC_PLUGIN"
		for i in 1 2 3 4 5 6; do
			printf '$(async-try s%d,%s)\n' "$i" "$(barrier_cmd "$TRASH/log" "$TRASH/bar" "$1" "s$i")"
		done
		echo '$(async-wait)'
		echo '$(info $(async-stats))'
		echo 'all: ; @:'
	} >Makefile
	rm -rf log bar bar.timeout
	mkdir bar
}
# exactly N: all jobs passed a barrier of N, and no more than N overlapped
exactly() {
	[ ! -e bar.timeout ] || { echo "the barrier of $1 was never passed"; cat out err; return 1; }
	expect_overlap_le "$1" log
}

mk_barrier 1; run_make
ok "no -j: one job at a time while makefiles are read" exactly 1
mk_barrier 2; run_make -j2
ok "-j2: exactly two jobs at a time while makefiles are read" exactly 2
mk_barrier 3; run_make -kj3
ok "bundled -kj3 is understood" exactly 3
mk_barrier 2; run_make --jobs 2
ok "--jobs 2 is understood" exactly 2

# -j8 with a pool of 2: the pool holds jobs queued ahead, never more
# than its workers run at once, and stats count started jobs only.
write_config "workers: 2"
mk_barrier 2; run_make -j8
ok "-j8, workers: 2: at most two jobs at once" exactly 2
ok "-j8, workers: 2: max_running counts started jobs" expect_grep 'max_running=2 ' out
write_config "workers: 8"

# A jobserver we own with three distinct token bytes: the plugin may run
# one job on its implicit slot plus one per token, and must give back the
# very bytes it read.
for style in pipe fifo; do
	if [ "$style" = fifo ] && [ "$(make_version)" = 4.3 ]; then
		skip "fifo jobserver: make $(make_version) only speaks pipes"
		skip "fifo jobserver: make $(make_version) only speaks pipes"
		continue
	fi
	mk_barrier 4
	"$TEST_HELPERDIR/jsbox.py" "$style" abc -- "$MAKE_UT" >out 2>err; rc=$?
	ok "$style jobserver: at most implicit slot + 3 tokens, and all are used" exactly 4
	ok "$style jobserver: the same token bytes come back" \
		sh -c '[ "$0" -eq 0 ] && tail -n1 out | grep -qx "tokens:abc" || { cat out err; exit 1; }' "$rc"
done

# Recipes queuing build steps under -j3 are in t3025 (the pool grows to 3).

# MAKE-FACTS' deadlock: two children hold make's slots; a third recipe
# waits inside a function while make cannot reap them.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: a b c
a c: ; @sleep 1
b: ; @$(async-try x,echo ran)$(async-wait x)echo b=$(x.out)
EOF2
start=$(date +%s%N)
TEST_MAKE_TIMEOUT=20 run_make -j2
end=$(date +%s%N)
diag "deadlock scenario wall time: $(( (end - start) / 1000000 )) ms"
ok "the deadlock scenario completes" expect_make_ok
ok "the waiting recipe got its result" expect_grep '^b=ran$' out

# The same with both of make's slots taken before the wait: x may not run
# on the implicit slot while a and c run (make started a on that very
# slot), only once both have ended, though make, blocked in the wait,
# cannot reap them yet.  Never 3 at once under -j2, and no deadlock.
{
	echo "load $ASYNC_PLUGIN"
	echo 'all: a c b'
	printf 'a c: ; @%s\n' "$(span_cmd "$TRASH/log" '$@' 1)"
	printf 'b: ; @$(async-try x,%s)$(async-wait x)echo b=$(x.status)\n' "$(span_cmd "$TRASH/log" x 0.2)"
} >Makefile
rm -f log
TEST_MAKE_TIMEOUT=20 run_make -j2
ok "make's two slots busy, a wait in a third recipe: completes" expect_make_ok
ok "make's two slots busy: the waited job ran" expect_grep '^b=0$' out
ok "make's two slots busy: never 3 at once under -j2" expect_overlap_le 2 log

# Token accounting at exit after success, failure, -k and $(error).
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: x y z
x y z:
	$(foreach i,1 2 3,$(async-compile $@$i,sleep 0.1$(if $(FAIL), && exit 1)))
	$(async-wait)
EOF2
for args in "-j3" "-j3 FAIL=1" "-k -j3 FAIL=1"; do
	run_make -s $args
	case $args in
	*FAIL*) ok "make $args: fails as its steps did" test "$make_status" -eq 2 ;;
	*) ok "make $args: exits 0" expect_make_ok ;;
	esac
	ok "make $args: no INTERNAL token message" expect_no_grep INTERNAL err
done
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: x y
x: ; @sleep 0.2
y: ; $(async-try q,sleep 0.1)$(error stop here)
EOF2
run_make -j3
ok "\$(error) in a recipe: make exits 2 without token message" \
	sh -c '[ "$0" -eq 2 ] && ! grep -q INTERNAL err' "$make_status"

# Workers started lazily by the I/O thread die with it (parent-death
# signal): tearing the pool down must not hit make with SIGPIPE.
write_config "workers: 2" "warm: false"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try a,true)
$(async-wait)
all: ; @:
EOF2
bad=0
for i in 1 2 3 4 5 6 7 8 9 10; do run_make; [ "$make_status" -eq 0 ] || bad=$((bad + 1)); done
ok "warm: false, 10 runs: make always exits 0 (no SIGPIPE at exit)" expect_eq 0 "$bad" "failed runs"
write_config "workers: 8"

# Jobs started while makefiles are read hold no token; once recipes run,
# they stand in for tokens instead of being added on top.
{
	echo "load $ASYNC_PLUGIN"
	for i in 1 2 3 4; do printf '$(async-try p%d,%s)\n' "$i" "$(span_cmd "$TRASH/log" "p$i" 0.6)"; done
	echo 'all:'
	printf '\t$(foreach i,1 2 3,$(async-try r$i,%s))\n' "$(span_cmd "$TRASH/log" 'r$i' 0.2)"
	printf '\t$(async-wait)\n'
} >Makefile
rm -f log; run_make -s -j4
ok "parse-time jobs still running when recipes start: no more than -j4 + implicit" \
	sh -c '[ "$(sort -n log | awk "{c+=\$2; if(c>m)m=c} END{print m}")" -le 4 ] || { sort -n log; exit 1; }'

# A recipe queues jobs and never waits: at exit the top-level make reads
# its tokens back; the jobs are killed and the tokens returned, no hang,
# and make fails saying which jobs were never waited for.
M=$$
write_mk Makefile <<EOF2
load @PLUGIN@
all: a b
a: ; \$(foreach i,1 2 3,\$(async-try s\$i,sleep 1204.$M))
b: ; @sleep 0.3
EOF2
TEST_MAKE_TIMEOUT=30 run_make -j3
ok "unwaited jobs holding tokens: make exits by itself, failing" expect_eq 2 "$make_status" "exit status"
ok "unwaited jobs holding tokens: no token message" expect_no_grep INTERNAL err
ok "unwaited jobs holding tokens: an error names each" \
	expect_eq 3 "$(grep -c "^Makefile:3: \*\*\* asynccompile: probe 's[123]' was queued here and never waited for" err)" "lines"
ok "unwaited jobs holding tokens: no job is left" sh -c "! pgrep -f '[s]leep 1204.$M'"

done_testing
