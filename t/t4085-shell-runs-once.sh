#!/bin/sh
# Nothing runs twice: every command a make hands to the plugin runs once -
# probes, build steps, async-shell calls answered in make's process or by
# speculation, commands stopped by the timeout - and only a job whose
# worker died in the middle of it runs again, once per retry.  A job whose
# timeout had expired when its worker died is over: it is reported timed
# out, not run again (t4080 once saw a timed-out job run twice in one make).
#
# Every command appends its name to ./runs first thing, so each start of
# it is one line there: a command that ran twice shows two lines.
. "$(dirname "$0")/lib.sh"

M=1285.$$ # the sleeps of this run's jobs, found by none_left

stat_of() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" out | tail -n1; }
# runs_are "NAME=N ...": exactly these commands started, each N times
runs_are() {
	tl_want=$(for w in $1; do echo "$w"; done | sort)
	tl_got=$(sort runs 2>/dev/null | uniq -c | awk '{ print $2 "=" $1 }' | sort)
	expect_eq "$tl_want" "$tl_got" "starts per command"
}

# 1. Every kind of job, some stopped by the timeout.  The first run has no
# record: async-shell runs in make's process.  In the second the plugin
# may speculate the async-shell commands (run them in the pool, queued at
# load); either way each starts once.  (Inside a recipe the build steps'
# status goes to the wait's collector line, not to NAME.status.)
write_config "workers: 2" "timeout: 1s" "retries: 1"
write_mk Makefile <<EOF2
load @PLUGIN@
S1 := \$(async-shell echo shell1 >>runs; echo one)
ST := \$(async-shell echo shellT >>runs; exec sleep $M)
STS := \$(.SHELLSTATUS)
\$(foreach i,1 2 3,\$(async-try try\$i,echo try\$i >>runs))
\$(async-try tryT,echo tryT >>runs; exec sleep $M)
\$(async-wait)
\$(info parse: \$(S1) \$(STS) \$(try1.status)\$(try2.status)\$(try3.status) \$(tryT.status))
all:
	@\$(foreach i,1 2,\$(async-compile step\$i,echo step\$i >>runs))\$(async-try stepT,echo stepT >>runs; exec sleep $M)\$(async-wait)
	@echo "recipe: \$(stepT.status)"
	@echo "STATS \$(async-stats)"
EOF2
every="shell1=1 shellT=1 try1=1 try2=1 try3=1 tryT=1 step1=1 step2=1 stepT=1"
for pass in "first run" "second run"; do
	rm -f runs
	run_make -j3
	ok "$pass: make succeeds" expect_make_ok
	ok "$pass: the answers, three timed out" sh -c \
		'grep -q "^parse: one 124 000 124$" out && grep -q "^recipe: 124$" out || { cat out err; exit 1; }'
	ok "$pass: each command started once" runs_are "$every"
	ok "$pass: nothing retried" expect_eq 0 "$(stat_of retried)" retried
	ok "$pass: no job left running" none_left $M
done
diag "second run: $(stat_of spec_hits) of 2 async-shell calls answered by speculation"

# 2. A job that kills its worker is run again, once (retries: 1); the
# other jobs, queued beside it or run by the same worker before, are not.
# (The record of case 1 goes: these makefiles have the same name, and its
# commands would be speculated, and run, here.)
rm -f "$XDG_CACHE_HOME"/asynccompile/rec-*
write_mk Makefile <<EOF2
load @PLUGIN@
\$(foreach i,1 2 3,\$(async-try before\$i,echo before\$i >>runs))
\$(async-wait)
\$(async-try crash,echo crash >>runs; if mkdir crashed 2>/dev/null; then kill -9 \$\$PPID; exec sleep $M; fi; echo survived)
\$(foreach i,1 2 3 4,\$(async-try other\$i,echo other\$i >>runs))
\$(async-try slow,echo slow >>runs; exec sleep $M)
\$(async-wait)
\$(info crash=\$(crash.status):\$(crash.out) slow=\$(slow.status))
all: ; @echo "STATS \$(async-stats)"
EOF2
rm -rf runs crashed
run_make -j3
ok "a worker killed by its job: make succeeds" expect_make_ok
ok "a worker killed by its job: re-run, it succeeds" expect_grep '^crash=0:survived slow=124$' out
ok "a worker killed by its job: it started twice, everything else once" \
	runs_are "before1=1 before2=1 before3=1 crash=2 other1=1 other2=1 other3=1 other4=1 slow=1"
ok "a worker killed by its job: one retry" expect_eq 1 "$(stat_of retried)" retried
ok "a worker killed by its job: no job left running" none_left $M

write_config "workers: 2" "timeout: 1s" "retries: 0"
rm -rf runs crashed
run_make -j3
ok "retries 0: make succeeds" expect_make_ok
ok "retries 0: the crashed job fails" expect_grep '^crash=125: slow=124$' out
ok "retries 0: every command started once" \
	runs_are "before1=1 before2=1 before3=1 crash=1 other1=1 other2=1 other3=1 other4=1 slow=1"
ok "retries 0: no job left running" none_left $M

# 3. The worker dies while its timed-out job is being stopped: the job
# ignores the timeout's SIGTERM (it only notes it), so it is still there
# in the kill_grace window when the worker is killed.  Its time is up: it
# is reported timed out, not run again; the jobs beside it run once.
write_config "workers: 2" "timeout: 1s" "kill_grace: 10s" "retries: 1"
rm -f "$XDG_CACHE_HOME"/asynccompile/rec-*
write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try grace,echo grace >>runs; echo \$\$PPID >worker.pid; echo \$\$\$\$ >job.pid; trap "touch got-term" TERM; while :; do sleep $M; done)
\$(foreach i,1 2 3,\$(async-try beside\$i,echo beside\$i >>runs))
\$(async-wait)
\$(info grace=\$(grace.status))
\$(info \$(grace.err))
all: ; @echo "STATS \$(async-stats)"
EOF2
rm -f runs worker.pid job.pid got-term
# kill the worker once the job has had its SIGTERM (the timeout's)
( wait_until test -e got-term && kill -KILL "$(cat worker.pid)" ) &
killer=$!
run_make -j3
wait $killer; killed=$?
ok "timed-out job, worker killed while it is stopped: the worker was killed" test "$killed" -eq 0
ok "timed-out job, worker killed while it is stopped: make succeeds" expect_make_ok
ok "timed-out job, worker killed while it is stopped: status 124, and why" sh -c \
	'grep -q "^grace=124$" out && grep -q "timed out after 1000 ms" out || { cat out err; exit 1; }'
ok "timed-out job, worker killed while it is stopped: every command started once" \
	runs_are "grace=1 beside1=1 beside2=1 beside3=1"
ok "timed-out job, worker killed while it is stopped: not retried" \
	expect_eq "0 1" "$(stat_of retried) $(stat_of timed_out)" "retried timed_out"
ok "timed-out job, worker killed while it is stopped: no job left running" none_left $M

# 4. The same with the pool supervisor killed instead (subprocess start
# method): make starts another and sends it the jobs it had, but not one
# whose time was up.
if [ "${TEST_START_METHOD:-subprocess}" = subprocess ]; then
	rm -f runs worker.pid job.pid got-term
	# make counts the job's time from its STARTED, which may come late
	# under load: kill once the job has run a second past its timeout
	( wait_until test -e got-term &&
	  wait_until sh -c '[ "$(ps -o etimes= -p "$(cat job.pid)")" -ge 2 ]' &&
	  kill -KILL "$(ps -o ppid= -p "$(cat worker.pid)" | tr -d ' ')" ) &
	killer=$!
	run_make -j3
	wait $killer; killed=$?
	ok "timed-out job, supervisor killed while it is stopped: the supervisor was killed" \
		test "$killed" -eq 0
	ok "timed-out job, supervisor killed while it is stopped: make succeeds" expect_make_ok
	ok "timed-out job, supervisor killed while it is stopped: status 124, and why" sh -c \
		'grep -q "^grace=124$" out && grep -q "timed out after 1000 ms; the pool supervisor died" out ||
		 { cat out err; exit 1; }'
	ok "timed-out job, supervisor killed while it is stopped: every command started once" \
		runs_are "grace=1 beside1=1 beside2=1 beside3=1"
	ok "timed-out job, supervisor killed while it is stopped: no job left running" none_left $M
else
	for i in 1 2 3 4 5; do skip "the pool supervisor: start method $TEST_START_METHOD has none"; done
fi

done_testing
