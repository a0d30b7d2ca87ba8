#!/bin/sh
# test: per-start-method
# Failures only a fault-injection build can force (plugin/fault.h): a
# backend refusing a job, and the pool stopped under queued jobs.  None
# may leave a wait blocked or a token held.
. "$(dirname "$0")/lib.sh"
M=$$

FAULT_PLUGIN=${ASYNC_FAULT_PLUGIN:-$TEST_ROOT/build/faults/asynccompile.so}
case $FAULT_PLUGIN in /*) ;; *) FAULT_PLUGIN=$TEST_CWD/$FAULT_PLUGIN ;; esac
[ -f "$FAULT_PLUGIN" ] || skip_all "no $FAULT_PLUGIN (run make test-build)"
ASYNC_PLUGIN=$FAULT_PLUGIN
# it is not next to the worker executable it would look for
if [ -z "${ASYNC_COMPILE_WORKER:-}" ]; then
	ASYNC_COMPILE_WORKER=$TEST_ROOT/worker/asynccompile-worker
	export ASYNC_COMPILE_WORKER
fi
# a broken build hangs: fail in seconds, not the default minute
TEST_MAKE_TIMEOUT=30

# submit() refusing a job, at parse time: that job fails with the reason,
# the others run.
write_config "workers: 2"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(foreach i,1 2 3,$(async-try t$i,echo out$i))
$(async-wait)
$(info $(foreach i,1 2 3,t$i=$(t$i.status):$(t$i.out)))
$(info err=$(t2.err))
all: ; @:
EOF2
ASYNC_COMPILE_FAULTS="submit:t2" run_make
ok "refused submit: the wait returns, the job fails with 125, the others run" \
	expect_grep '^t1=0:out1 t2=125: t3=0:out3$' out
ok "refused submit: NAME.err gives the reason" \
	expect_grep '^err=asynccompile: the pool refused the job (Cannot allocate memory); not run$' out
ok "refused submit: make is fine" expect_make_ok

# The same inside a recipe under -j3: the refused build step holds a
# jobserver token when it is refused; it must go back (make 4.4.1 and 4.3
# count their tokens at exit), and make must fail the target.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: ; @$(foreach i,1 2 3,$(async-compile c$i,echo built$i))$(async-wait)
EOF2
ASYNC_COMPILE_FAULTS="submit:c2" run_make -j3
ok "refused build step: make fails the target" expect_eq 2 "$make_status" "make's exit status"
ok "refused build step: make names it" expect_grep 'c2 (status 125): echo built2' err
ok "refused build step: and says why" expect_grep 'asynccompile: the pool refused the job' err
ok "refused build step: the other steps ran" expect_grep '^built3$' out
ok "refused build step: its token came back" expect_no_grep 'INTERNAL' err

# The pool stopped (as when make exits under it) while one job runs and
# another is still queued: both end with 125 and a reason, and a job
# queued afterwards ends at once, so no wait blocks for ever.  workers: 2
# without -j: one job at a time, none handed to the pool ahead.
write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try r,sleep 1251.$M)
\$(async-try q,echo never)
\$(async-wait)
\$(info r=\$(r.status) q=\$(q.status) q.err=\$(q.err))
\$(async-try late,echo never)
\$(async-wait)
\$(info late=\$(late.status) late.err=\$(late.err))
all: ; @:
EOF2
ASYNC_COMPILE_FAULTS="stop:r" run_make
ok "pool stopped: the running job is killed, the queued one is not run" \
	expect_grep '^r=125 q=125 q.err=asynccompile: not run: make was exiting$' out
ok "pool stopped: a job queued afterwards ends at once" \
	expect_grep '^late=125 late.err=asynccompile: not run: make was exiting$' out
ok "pool stopped: make exits 0 (probes never stop make)" expect_make_ok
ok "pool stopped: the running job's command is gone" none_left "1251.$M"

# The pool supervisor killed under a job the plugin knows is running
# (its STARTED came): with retries 0 that was its one run, and the job
# gives up with a reason instead of running again (pool_fate(), the rule a
# worker's death follows).  One that had not started yet is sent again.
if [ "${TEST_START_METHOD:-subprocess}" = subprocess ]; then
	write_config "workers: 2" "retries: 0"
	write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try long,touch ran.long; while [ ! -e killed ]; do sleep 0.05; done; echo long)
\$(async-wait)
\$(info long=\$(long.status) err=\$(long.err))
all: ; @:
EOF2
	rm -f fault-started.long killed ran.long
	( wait_until test -e fault-started.long && kill_my_supervisor; touch killed ) &
	killer=$!
	ASYNC_COMPILE_FAULTS="note:long" run_make
	wait $killer
	ok "supervisor killed under a started job, retries 0: it gives up with 125" \
		expect_grep '^long=125 ' out
	ok "... and says the supervisor died and how many runs it had" \
		expect_grep 'err=asynccompile: the pool supervisor died while this job ran (attempt 1 of 1); giving up$' out
	ok "... make goes on (a probe)" expect_make_ok
else
	skip "supervisor death: start method $TEST_START_METHOD has no supervisor"
	skip "supervisor death: start method $TEST_START_METHOD has no supervisor"
	skip "supervisor death: start method $TEST_START_METHOD has no supervisor"
fi

done_testing
