#!/bin/sh
# test: per-start-method
# Signals sent to make's whole process group (a CI cancelling a job, a
# timeout(1), Ctrl-C and Ctrl-\ on a terminal) while build steps run:
# nothing the plugin started may outlive make, and make dying is no
# reason to restart a pool or run a job again.
. "$(dirname "$0")/lib.sh"
M=$$  # a marker unique to this test run, found in job command lines

# every descendant of pid $1, deepest last
descendants() {
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}
all_gone() { # pid...
	for p in "$@"; do
		alive "$p" && { echo "still alive: $(ps -o pid=,ppid=,pgid=,args= -p "$p")"; return 1; }
	done
	return 0
}

# Three build steps: one a shell with a child, one exec'd directly, one
# whose process left the job's process group (and session).
write_config "workers: 3"
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	$(async-compile j1,sleep $(MK); true)
	$(async-compile j2,sleep $(MK))
	$(async-compile j3,setsid sleep $(MK) & wait)
	$(async-wait)
EOF2

# start_make MARKER: make -j4 in a session (and process group) of its own,
# pid in $mk, once all three jobs run; their pool's processes in $kids.
start_make() {
	# as on a terminal: SIGINT and SIGQUIT at their defaults, not ignored
	# as they are for a non-interactive shell's background job
	setsid env --default-signal=INT,QUIT "$MAKE_UT" -j4 MK="$1" >out 2>err &
	mk=$!
	wait_until running "$1" 3
	kids=$(descendants "$mk" | tr '\n' ' ')
	[ "$(ps -o pgid= -p "$mk" | tr -d ' ')" = "$mk" ]
}

sig_group() { # signal name, marker
	if ! start_make "$2"; then
		skip "SIG$1 to make's group: make did not start its jobs or lead its group"
		kill -KILL -- "-$mk" 2>/dev/null; wait "$mk"; none_left "$2" >/dev/null
		return
	fi
	kill -s "$1" -- "-$mk"
	wait "$mk"; rc=$?
	t0=$(date +%s%N)
	none_left "$2"; r=$?
	t1=$(date +%s%N)
	diag "SIG$1 to make's group: make exited $rc, its jobs were gone $(( (t1 - t0) / 1000000 )) ms later"
	ok "SIG$1 to make's process group: make is gone" test "$rc" -ne 0
	ok "SIG$1 to make's process group: no job outlives make" test "$r" -eq 0
	ok "SIG$1 to make's process group: no pool process outlives make" \
		wait_until all_gone $kids
	# make dying is no pool crash: nothing is restarted or run again
	ok "SIG$1 to make's process group: no pool restart, no job re-sent" \
		expect_no_grep 'restart\|re-send\|re-running\|exited unexpectedly' err
}

sig_group KILL 1501.$M
sig_group QUIT 1502.$M
sig_group TERM 1503.$M
sig_group INT 1504.$M
sig_group HUP 1505.$M

done_testing
