#!/bin/sh
# test: per-start-method
# make SIGKILLed while another process still holds the write end of the
# pipe its pool reads (as a child make forked, and not yet exec'd, would):
# no EOF comes, so only the parent-death signal can end the pool process
# and, with it, the job.  Every start method, the fork one included.
. "$(dirname "$0")/lib.sh"
M=$$

# ppid PID: the parent of PID (field 4 of /proc/PID/stat, after the name)
ppid() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f2; }

# wait_gone PID: poll (bounded, 10 s) until PID has exited
wait_gone() {
	i=0
	while alive "$1"; do
		i=$((i + 1))
		if [ "$i" -ge 200 ]; then
			echo "process $1 still alive:"; ps -o pid,ppid,stat,args -p "$1"
			return 1
		fi
		sleep 0.05
	done
}

write_config "workers: 1"
mkfifo ready
write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try j,echo \$\$PPID >ready; exec sleep 1301.$M)
\$(async-wait)
all: ; @:
EOF2
"$MAKE_UT" >out 2>err &
mk=$!
# the job's parent is a worker; the pool process make started is that
# worker (fork, spawn) or the supervisor above it (subprocess)
pool=$(timeout 60 sh -c 'read -r p <ready && echo "$p"')
[ -n "$pool" ] || { kill -KILL "$mk"; cat err; echo "Bail out! the job never started"; exit 1; }
while [ "$(ppid "$pool")" != "$mk" ]; do
	pool=$(ppid "$pool")
	[ "$pool" -gt 1 ] || break
done
ok "found make's pool process" test "$(ppid "$pool")" = "$mk"
# hold the pool's input open, as a copy of make's write end would
exec 7>"/proc/$pool/fd/0"
kill -KILL "$mk"
wait "$mk" 2>/dev/null
ok "make SIGKILLed: its pool process dies" wait_gone "$pool"
ok "make SIGKILLed: the job is gone" none_left "1301.$M"
exec 7>&-
alive "$pool" && kill -KILL "$pool"

done_testing
