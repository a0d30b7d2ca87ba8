#!/bin/sh
# test: per-start-method
# Reliability rules under fault injection, through make.
. "$(dirname "$0")/lib.sh"
sm=${TEST_START_METHOD:-subprocess}
M=$$  # a marker unique to this test run, found in job command lines

gone() { ! pgrep -f "$1" >/dev/null; }

write_config "workers: 2" "retries: 1"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try crash,if [ ! -e once ]; then touch once; kill -9 $$PPID; sleep $(MK); fi; echo survived)
$(foreach i,1 2 3,$(async-try other$i,echo fine$i))
$(async-wait)
$(info crash=$(crash.status):$(crash.out) others=$(other1.out)$(other2.out)$(other3.out))
$(info $(async-stats))
all: ; @:
EOF2
run_make MK=1009.$M
ok "a job that kills its worker is re-run and succeeds" expect_grep '^crash=0:survived others=fine1fine2fine3$' out
ok "the retry is counted" expect_grep 'retried=1 ' out
ok "make is fine" expect_make_ok
ok "the crashed attempt's job is not left running" none_left 1009.$M

write_config "workers: 2" "retries: 0"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try crash,kill -9 $$PPID; sleep $(MK))
$(async-wait)
$(info crash=$(crash.status) err=$(crash.err))
all: ; $(async-compile boom,kill -9 $$PPID; sleep $(MK))$(async-wait)
EOF2
run_make MK=1010.$M
ok "retries exhausted: the job fails with a reason" expect_grep '^crash=[1-9][0-9]* err=.*worker.*died' out
ok "retries exhausted in a recipe: make reports it" expect_grep "boom (status" err
ok "retries exhausted: no token message, make exits 2" sh -c '[ "$0" -eq 2 ] && ! grep -q INTERNAL err' "$make_status"
ok "retries exhausted: neither crashed job is left running" none_left 1010.$M

if [ "$sm" = subprocess ]; then
	# Kill the supervisor while six jobs are queued or running: each job
	# holds on (at most 10 s) until the supervisor has been killed, so
	# none can finish first; a re-run finds `killed` and goes on.
	write_config "workers: 2" "retries: 1"
	write_mk Makefile <<'EOF2'
load @PLUGIN@
$(foreach i,1 2 3 4 5 6,$(async-try j$i,touch started.$i; n=0; while [ ! -e killed ] && [ $$n -lt 200 ]; do sleep 0.05; n=$$((n + 1)); done; echo ok$i))
$(async-wait)
$(info results=$(foreach i,1 2 3 4 5 6,$(j$i.status)$(j$i.out)))
all: ; @:
EOF2
	rm -f started.* killed
	( wait_until test -e started.1 && kill_my_supervisor; touch killed ) &
	killer=$!
	run_make -j2
	wait $killer
	ok "supervisor killed mid-batch: every job still succeeds" \
		expect_grep '^results=0ok1 0ok2 0ok3 0ok4 0ok5 0ok6$' out
	ok "the restart is reported" expect_grep 'pool supervisor .* died' err
else
	skip "supervisor restart: start method $sm has no supervisor"
	skip "supervisor restart: start method $sm has no supervisor"
fi

write_config "workers: 2" "timeout: 1s" "kill_grace: 300ms"
write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try hang,trap "" TERM; (trap "" TERM; sleep 1201.$M) & sleep 1201.$M)
\$(async-wait)
\$(info hang=\$(hang.status))
all: ; @:
EOF2
start=$(date +%s%N); run_make; end=$(date +%s%N)
diag "timeout 1s + kill_grace 300ms: job ended after $(( (end - start) / 1000000 )) ms"
ok "a job ignoring SIGTERM is stopped by the timeout with 124" expect_grep '^hang=124$' out
ok "its children are gone too" gone "sleep 1201.$M"

# A job whose processes leave its process group (timeout(1) does) must
# not outlive it: the worker, a child subreaper, kills what is left.
write_config "workers: 2" "timeout: 1s" "kill_grace: 300ms"
write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try esc,timeout 60 sleep 1206.$M; echo never)
\$(async-try esc2,timeout 60 sleep 1206.$M & echo left-behind)
\$(async-wait)
\$(info esc=\$(esc.status) esc2=\$(esc2.status):\$(esc2.out))
all: ; @:
EOF2
run_make
ok "processes that left the job's group: the job still times out" expect_grep '^esc=124 esc2=0:left-behind$' out
ok "processes that left the job's group are gone afterwards" wait_until gone "sleep 1206.$M"

# A job touching the terminal must fail, not stop forever on SIGTTIN.
if command -v script >/dev/null 2>&1; then
	write_config "workers: 2"
	write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try tty,read x </dev/tty)
$(async-wait)
$(info tty=$(tty.status))
all: ; @:
EOF2
	timeout 30 script -qec "$MAKE_UT" /dev/null >tty.out 2>&1 </dev/null; rc=$?
	ok "a job reading /dev/tty under a terminal fails at once instead of hanging" \
		sh -c '[ "$0" -eq 0 ] && grep -q "^tty=[1-9]" tty.out || { echo "rc=$0"; cat tty.out; exit 1; }' "$rc"
else
	skip "job and terminal: script(1) is not installed"
fi

# Ctrl-C: SIGINT to make's whole process group while long jobs run.
write_config "workers: 2"
write_mk Makefile <<EOF2
load @PLUGIN@
\$(foreach i,1 2 3,\$(async-try long\$i,touch started.\$i; sleep 1202.$M))
\$(async-wait)
all: ; @:
EOF2
rm -f started.*
setsid env --default-signal=INT "$MAKE_UT" -j2 >out 2>err &
mk=$!
wait_until test -e started.1
wait_until test -e started.2
t0=$(date +%s%N)
/bin/kill -s INT -- "-$mk"
wait "$mk"; rc=$?
t1=$(date +%s%N)
diag "SIGINT: make exited after $(( (t1 - t0) / 1000000 )) ms with status $rc"
ok "Ctrl-C: make exits" test "$rc" -ne 0
ok "Ctrl-C: no job is left" wait_until gone "sleep 1202.$M"
ok "Ctrl-C: no worker or supervisor is left" wait_until gone "asynccompile-worker.*$M|$TRASH"

# make itself SIGKILLed: workers notice and take their jobs with them.
rm -f started.*
sed -i "s/1202/1203/" Makefile
"$MAKE_UT" >out 2>err &
mk=$!
wait_until test -e started.1
kids=$(pgrep -P "$mk" | tr '\n' ' ')
kill -KILL "$mk"; wait "$mk" 2>/dev/null
t0=$(date +%s%N)
wait_until gone "sleep 1203.$M"; r=$?
t1=$(date +%s%N)
diag "make SIGKILLed: jobs gone after $(( (t1 - t0) / 1000000 )) ms"
ok "make SIGKILLed: its jobs are gone" test "$r" -eq 0
diag "make's pool processes before the kill: $kids"
ok "make SIGKILLed: no worker or supervisor process is left" \
	wait_until sh -c 'for p in $0; do kill -0 $p 2>/dev/null && exit 1; done; exit 0' "$kids"

# A job sees only its own stdin/stdout/stderr, under a jobserver too.
write_config "workers: 2"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try fds,ls /proc/self/fd)
$(async-try sock,ls -l /proc/$$PPID/fd /proc/$$PPID/task >/dev/null; ls -l /proc/$$PPID/fd | grep -c socket:)
$(async-wait)
$(info fds=$(fds.out) sockets=$(sock.out))
all: ; @:
EOF2
"$TEST_HELPERDIR/jsbox.py" pipe abc -- "$MAKE_UT" >out 2>err
ok "a job inherits no descriptor of make's (jobserver, pool pipes)" expect_grep '^fds=0 1 2 3 sockets=' out
ok "the worker holds no socket" expect_grep ' sockets=0$' out

# A supervisor that cannot be executed: make's stderr says why in errno's
# words (log_msg's trailing-colon rule), and the probe is not run.  Last:
# it leaves ASYNC_COMPILE_WORKER set.
if [ "$sm" = subprocess ]; then
	: >noexec && chmod 755 noexec
	write_config "workers: 2"
	write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try p,true)
$(async-wait)
$(info p=$(p.status))
all: ; @:
EOF2
	ASYNC_COMPILE_WORKER=$TRASH/noexec
	export ASYNC_COMPILE_WORKER
	run_make
	ok "an unexecutable supervisor: the reason names it and says errno's words" \
		expect_grep "^asynccompile: cannot start the pool supervisor $TRASH/noexec: Exec format error$" err
	ok "an unexecutable supervisor: the probe is not run, make goes on" \
		sh -c '[ "$0" -eq 0 ] && grep -q "^p=[1-9]" out' "$make_status"
else
	skip "an unexecutable supervisor: start method $sm has no supervisor"
	skip "an unexecutable supervisor: start method $sm has no supervisor"
fi

done_testing
