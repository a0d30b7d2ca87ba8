#!/bin/sh
# test: per-start-method
# workers: auto starts at the CPU count and grows the pool as far as -jN
# (or the jobserver's tokens) lets jobs run; an explicit count is a hard
# cap.  "Reaches N" is proven by a barrier that only N jobs running at
# once can pass (barrier_cmd); "never more than N" by the jobs' spans.
. "$(dirname "$0")/lib.sh"
write_config # workers: auto, the default
cpus=$(nproc)

# mk_parse COUNT BARRIER: COUNT probes while makefiles are read, waited for.
mk_parse() {
	{
		echo "load $ASYNC_PLUGIN"
		i=1
		while [ "$i" -le "$1" ]; do
			printf '$(async-try p%d,%s)\n' "$i" "$(barrier_cmd "$TRASH/log" "$TRASH/bar" "$2" "p$i")"
			i=$((i + 1))
		done
		echo '$(async-wait)'
		echo '$(info $(async-stats))'
		echo 'all: ; @:'
	} >Makefile
}
fresh() { rm -rf log bar bar.timeout; mkdir bar; }
# reached N: make succeeded and no job gave up at the barrier
reached() {
	expect_make_ok || return 1
	[ ! -e bar.timeout ] || { echo "the barrier of $1 was never passed"; cat err; return 1; }
}
at_most() { expect_overlap_le "$1" log; }

# -j4 while makefiles are read (no jobserver yet): four at once.
mk_parse 6 4
fresh; run_make -j4
ok "-j4, parse time: the pool grows until 4 probes run at once" reached 4
ok "-j4, parse time: never more than 4" at_most 4
diag "-j4 parse time: max overlap $(max_overlap log), $(grep -o 'pool_size=[0-9]*' out)"

# -j4 given only through the environment, as make reads it: make 4.3
# shows it nowhere while it reads its makefiles.
for e in MAKEFLAGS=j4 MAKEFLAGS=kj4 MAKEFLAGS=-j4 GNUMAKEFLAGS=-j4; do
	mk_parse 4 4
	fresh; (export "$e"; run_make; exit "$make_status"); make_status=$?
	ok "$e in the environment, parse time: 4 probes run at once" reached 4
	ok "$e in the environment, parse time: never more than 4" at_most 4
done

# Beyond the CPU count, whatever it is here.
n=$((cpus + 2))
mk_parse $((n + 1)) "$n"
fresh; run_make -j"$n"
ok "-j$n ($cpus CPUs + 2), parse time: reaches $n" reached "$n"
ok "-j$n, parse time: never more than $n" at_most "$n"

# -j3 recipes queuing build steps, waited for by a later recipe: make runs
# none of its own commands, so 3 of the plugin's run at once.
{
	echo "load $ASYNC_PLUGIN"
	echo 'T := t1 t2 t3 t4'
	echo 'all: $(T) ; $(async-wait)'
	echo '$(T):'
	printf '\t$(foreach i,1 2 3,$(async-compile $@.$i,%s))\n' \
		"$(barrier_cmd "$TRASH/log" "$TRASH/bar" 3 '$@.$i')"
} >Makefile
fresh; run_make -s -j3
ok "-j3 recipes: the pool grows until 3 build steps run at once" reached 3
ok "-j3 recipes: never more than 3" at_most 3
ok "-j3 recipes: all 12 jobs ran" expect_eq 24 "$(wc -l <log | tr -d ' ')"

# A sub-make under a jobserver of 5 tokens: the implicit slot and one
# job per token, 6 at once, and the very tokens come back.
mk_parse 7 6
fresh
"$TEST_HELPERDIR/jsbox.py" pipe abcde -- "$MAKE_UT" >out 2>err; make_status=$?
ok "under a jobserver: grows while tokens can be had (6 at once)" reached 6
ok "under a jobserver: never more than implicit + 5 tokens" at_most 6
ok "under a jobserver: the same tokens come back" expect_eq "tokens:abcde" "$(tail -n1 out)"

# An explicit count is a hard cap.
write_config "workers: 3"
mk_parse 6 3
fresh; run_make -j8
ok "workers: 3, -j8: 3 run at once" reached 3
ok "workers: 3, -j8: never more than 3" at_most 3
ok "workers: 3: the pool stays at 3" expect_grep 'pool_size=3 ' out
write_config

# -j1 and no -j: one at a time, and the pool does not grow.
{
	echo "load $ASYNC_PLUGIN"
	for i in 1 2 3; do printf '$(async-try p%d,%s)\n' "$i" "$(span_cmd "$TRASH/log" "p$i" 0.1)"; done
	echo '$(async-wait)'
	echo '$(info $(async-stats))'
	echo 'all: ; @:'
} >Makefile
for j in -j1 ""; do
	rm -f log; run_make $j
	ok "make ${j:-without -j}: one job at a time" expect_eq 1 "$(max_overlap log)" "max overlap"
	ok "make ${j:-without -j}: the pool stays at the CPU count" expect_grep "pool_size=$cpus " out
done

# -j1 with recipes: build steps queued by one recipe wait while make runs
# the next recipe's command, and run one at a time in the final wait.
{
	echo "load $ASYNC_PLUGIN"
	echo 'all: a b ; $(async-wait)'
	printf 'a: ; $(foreach i,1 2 3,$(async-compile a$i,%s))
' "$(span_cmd "$TRASH/log" 'a$i' 0.1)"
	printf 'b: ; @%s
' "$(span_cmd "$TRASH/log" b 0.3)"
} >Makefile
rm -f log; run_make -s -j1
ok "-j1 recipes: make is happy" expect_make_ok
ok "-j1 recipes: build steps never run beside make's own command" at_most 1
ok "-j1 recipes: every job and command ran" expect_eq 8 "$(wc -l <log | tr -d ' ')"

# make -j (no number): no limit to follow, so auto stays at the CPU count
# (asynccompile(7), "CONCURRENCY").
mk_parse $((cpus + 1)) "$cpus"
fresh; run_make -j
ok "make -j: the CPU count runs at once" reached "$cpus"
ok "make -j: never more than the CPU count" at_most "$cpus"
ok "make -j: the pool stays at the CPU count" expect_grep "pool_size=$cpus " out

done_testing
