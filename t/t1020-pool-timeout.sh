#!/bin/sh
# Timeouts, cancellation and the end of a job's process group.
. "$(dirname "$0")/lib.sh"
pool_init

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

t_timeout() {
	rm -f pids
	t0=$(now_ms)
	"$CLIENT" -p pids "$WORKER" 1 one -t 1000 -g 500 'trap "" TERM; sleep 1001' >res 2>log ||
		{ cat log; return 1; }
	el=$(( $(now_ms) - t0 ))
	echo "elapsed ${el} ms" >elapsed
	grep -q '^status=124$' res && grep -q '^flags=TIMED_OUT$' res &&
	grep -q '^err: asynccompile: timed out after 1000 ms; killed$' res ||
		{ cat res; return 1; }
	# SIGTERM is ignored, so it took the SIGKILL after the grace.
	[ "$el" -ge 1500 ] && [ "$el" -lt 4000 ] || { echo "took $el ms"; return 1; }
	gone
}
ok 'a job ignoring SIGTERM is killed after timeout + grace: 124, group gone' t_timeout
[ -f elapsed ] && diag "timeout 1000 ms + grace 500 ms: $(cat elapsed)"

t_timeout_term() {
	t0=$(now_ms)
	"$CLIENT" "$WORKER" 1 one -t 300 -g 5000 'sleep 1006' >res 2>log || { cat log; return 1; }
	el=$(( $(now_ms) - t0 ))
	expect_grep '^status=124$' res && [ "$el" -lt 3000 ] || { echo "took $el ms"; return 1; }
}
ok 'a job obeying SIGTERM ends at the timeout, not after the grace' t_timeout_term

t_background() {
	rm -f pids
	t0=$(now_ms)
	"$CLIENT" -p pids "$WORKER" 1 one -O out 'sleep 1003 & echo started' >res 2>log ||
		{ cat log; return 1; }
	expect_grep '^status=0$' res && expect_eq started "$(cat out)" stdout &&
	[ $(( $(now_ms) - t0 )) -lt 3000 ] && gone
}
ok 'background children are killed when the command exits' t_background

t_escaped() {
	t0=$(now_ms)
	"$CLIENT" "$WORKER" 1 one 'setsid sleep 1020 & echo $! >daemon.pid; sleep 0.2; echo x' \
		>res 2>log || { cat log; return 1; }
	el=$(( $(now_ms) - t0 ))
	[ -s daemon.pid ] && kill "$(cat daemon.pid)"
	expect_grep '^status=0$' res &&
	expect_grep '^err: asynccompile: output still open 1000 ms after the command exited; stopped reading$' res &&
	[ "$el" -lt 4000 ] || { echo "took $el ms"; return 1; }
}
ok 'a process that left the group holding stdout does not hang the job' t_escaped

t_cancel() {
	rm -f pids
	"$CLIENT" -p pids "$WORKER" 1 cancel 'sleep 1005' >res 2>log || { cat log; return 1; }
	expect_grep '^status=143$' res && expect_grep '^flags=CANCELLED$' res &&
	expect_grep '^err: asynccompile: cancelled; killed$' res && gone
}
ok 'CANCEL stops a running job: RES_CANCELLED, group gone' t_cancel

done_testing
