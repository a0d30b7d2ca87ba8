#!/bin/sh
# A worker that dies mid-job is replaced and the job re-run, up to retries.
. "$(dirname "$0")/lib.sh"
pool_init

# The job's parent is its worker: the first attempt kills it, the re-run
# finds the marker and succeeds.  The `sleep` keeps the crashed attempt's
# group alive unless the pool kills it.  It dies before it is reported
# STARTED, so ./pids never names it: none_left looks for it by its marker.
M=1007.$$
CRASH="if [ -e marker ]; then echo second; else touch marker; kill -9 \$PPID; sleep $M; fi"

t_rerun() {
	rm -f marker pids
	"$CLIENT" -p pids "$WORKER" 2 one -O out "$CRASH" >res 2>log || { cat log; return 1; }
	expect_grep '^status=0$' res && expect_grep '^attempts=2$' res &&
	expect_eq second "$(cat out)" stdout &&
	expect_grep 're-running job 1 (attempt 2 of 2)' log &&
	gone && none_left $M
}
ok 'a job whose worker dies is re-run on a new worker and succeeds' t_rerun

t_giveup() {
	rm -f marker pids
	"$CLIENT" -p pids "$WORKER" 2 one -r 0 "$CRASH" >res 2>log || { cat log; return 1; }
	expect_grep '^status=125$' res && expect_grep '^flags=CRASHED$' res &&
	expect_grep '^attempts=1$' res &&
	expect_grep '^err: asynccompile: worker [01] died while running this job (attempt 1 of 1); giving up$' res &&
	gone && none_left $M
}
ok 'with retries 0 it fails with RES_CRASHED and a note' t_giveup

# Workers under the supervisor send STARTED only after a while (-S: here a
# minute), so a worker that dies early leaves a job the pool has no pid
# for.  The supervisor is a child subreaper: the orphan comes to it and
# is killed with its group before the RESULT goes out.
t_orphan_without_started() {
	m=1207.$$
	"$CLIENT" -S 60000 "$WORKER" 1 one -r 0 "kill -9 \$PPID; exec sleep $m" \
		>res 2>log || { cat log res; return 1; }
	expect_grep '^status=125$' res && expect_grep '^flags=CRASHED$' res || return 1
	if pgrep -f "sleep $m" >/dev/null; then
		echo "# the orphaned job is still running"
		pkill -f "sleep $m"
		return 1
	fi
}
ok 'a worker that dies before reporting STARTED leaves no job behind' t_orphan_without_started

# In a pid namespace entered from outside (some CI containers), the
# session leader is not visible: getsid() is 0 for the supervisor and its
# workers alike.  The sweep after a crash must still spare the live worker
# that the job is re-run on.
t_rerun_in_pidns() {
	rm -f marker left
	m=1208.$$
	crash="if [ -e marker ]; then echo second; else touch marker; kill -9 \$PPID; sleep $m; fi"
	# The leftover check runs inside: the namespace ends with its pid 1.
	unshare -p -f --mount-proc sh -c \
		'"$@" >res 2>log; echo "client=$?"; pgrep -f "^slee[p] '$m'" >left; true' \
		sh "$CLIENT" "$WORKER" 2 one -O out "$crash" >ns.out || { cat ns.out; return 1; }
	expect_grep '^client=0$' ns.out || { cat log; return 1; }
	expect_grep '^status=0$' res && expect_grep '^attempts=2$' res &&
	expect_eq second "$(cat out)" stdout || return 1
	if [ -s left ]; then
		echo "# the crashed attempt's job was left running: $(cat left)"
		return 1
	fi
}
if unshare -p -f --mount-proc sh -c 'test "$(ps -o sid= -p $$)" -eq 0' 2>/dev/null; then
	ok 'the re-run survives the sweep where getsid() is 0 (pid namespace)' t_rerun_in_pidns
else
	skip 'cannot enter a new pid namespace where getsid() is 0 (needs root and unshare)'
fi

t_keeps_serving() {
	rm -rf crashed
	"$CLIENT" "$WORKER" 2 many 300 'mkdir crashed 2>/dev/null && kill -9 $PPID; true' \
		>res 2>log || { cat log res; return 1; }
	expect_grep '^results=300 failed=0$' res && expect_grep 're-running job' log
}
ok 'a crash in the middle of 300 pipelined jobs loses none of them' t_keeps_serving

# Restarts are lazy: the re-run goes to the other, idle worker, so nothing
# has been restarted yet.
t_stats() {
	rm -f marker
	"$CLIENT" "$WORKER" 2 stats "$CRASH" >res 2>log || { cat log; return 1; }
	expect_grep '^stats: workers=2 submitted=1 completed=1 retried=1 crashed_workers=1 restarts=0 running=0 queued=0 max_running=1$' res &&
	none_left $M
}
ok 'STATS counts the submission, the re-run and the crash' t_stats

t_cannot_start() {
	cp "$WORKER" ./w || return 1
	t0=$(date +%s)
	"$CLIENT" -D ./w ./w 2 one true >res 2>log || { cat log res; return 1; }
	expect_grep '^status=127$' res && expect_grep '^flags=SPAWN_FAILED$' res &&
	expect_grep '^err: asynccompile: cannot start a worker: worker [01]: No such file or directory$' res &&
	expect_grep 'giving up after 5 failed worker starts' log &&
	[ $(( $(date +%s) - t0 )) -lt 10 ]
}
ok 'when no worker can be started, queued jobs fail instead of hanging' t_cannot_start

done_testing
