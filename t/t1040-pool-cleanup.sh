#!/bin/sh
# However the pool is left - shutdown frame, closed pipes, its client or
# itself killed, a signal - no supervisor, worker or job process remains.
. "$(dirname "$0")/lib.sh"
pool_init

# The pid file must name the supervisor, both workers and the job.
check_pids() {
	[ "$(grep -c '^worker ' pids)" -eq 2 ] && grep -q '^supervisor ' pids &&
	grep -q '^job ' pids || { echo "incomplete pid file:"; cat pids; return 1; }
}

# hold CMD: start a client that holds the pool busy with CMD; sets $client.
hold() {
	rm -f pids
	# a job of a non-interactive shell starts with SIGINT and SIGQUIT
	# ignored; a terminal's foreground group has them at their defaults
	env --default-signal=INT,QUIT "$CLIENT" -p pids "$WORKER" 2 hold "$1" >res 2>log &
	client=$!
	i=0
	until grep -q '^ready' pids 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 200 ] && { echo "pool never got ready"; cat log; return 1; }
		sleep 0.05
	done
	check_pids
}

t_shutdown() {
	rm -f pids
	"$CLIENT" -p pids "$WORKER" 2 stop 'sleep 1010' >res 2>log || { cat log; return 1; }
	check_pids && expect_grep '^supervisor_exit=0$' res && gone
}
ok 'a shutdown frame ends the running job, the workers and the supervisor' t_shutdown

t_eof() {
	rm -f pids
	"$CLIENT" -p pids "$WORKER" 2 orphan 'sleep 1011' >res 2>log || { cat log; return 1; }
	check_pids && expect_grep '^supervisor_exit=0$' res && gone
}
ok 'EOF on its input (pipes closed, client alive) has the same effect' t_eof

t_client_killed() {
	hold 'sleep 1012' || return 1
	kill -9 "$client"
	gone
}
ok 'kill -9 of the client leaves nothing behind' t_client_killed

# signalled JOB SIGNAL ROLE...: hold JOB, send SIGNAL to the pool processes
# of those roles (supervisor, worker) at once, then nothing may be left.
signalled() {
	hold "$1" || return 1
	sig=$2; shift 2
	targets=$(for role; do awk -v r="$role" '$1 == r { print $2 }' pids; done)
	kill -s "$sig" $targets
	gone; r=$?
	kill -9 "$client" 2>/dev/null
	wait "$client" 2>/dev/null
	return $r
}
ok 'SIGTERM to the supervisor ends its jobs and workers' \
	signalled 'sleep 1013' TERM supervisor
# Ctrl-\ reaches every process of a terminal's foreground group at once.
ok 'SIGQUIT to the supervisor and its workers at once ends their jobs' \
	signalled 'sleep 1016' QUIT supervisor worker
ok 'kill -9 of the supervisor: workers notice, kill their jobs, exit' \
	signalled 'trap "" TERM; sleep 1014' KILL supervisor

# A bare worker (no supervisor to kill the group for it) must end its job
# itself when its input ends or says shutdown.  It ignores SIGTERM here, so
# the worker's SIGKILL after the (capped) grace is what ends it.
t_bare_worker() {
	rm -f pids
	"$CLIENT" -W -p pids "$WORKER" 1 "$1" 'trap "" TERM; sleep 1015' >res 2>log ||
		{ cat log; return 1; }
	grep -q '^job ' pids && expect_grep '^supervisor_exit=0$' res && gone
}
ok 'a bare worker whose input hits EOF kills its job and exits 0' t_bare_worker orphan
ok 'a bare worker told to shut down kills its job and exits 0' t_bare_worker stop

t_worker_alone() {
	st=0
	"$WORKER" --worker 0 </dev/null >/dev/null 2>err || st=$?
	expect_eq 0 "$st" 'exit status at EOF before HELLO'
}
ok 'a worker whose input is empty exits 0' t_worker_alone

done_testing
