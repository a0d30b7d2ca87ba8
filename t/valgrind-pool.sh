#!/bin/sh
# valgrind-pool.sh WORKER CLIENT LOGDIR: drive the supervisor and its
# workers, all under valgrind (memcheck, full leak check), through the
# protocol client: plain jobs, a big-output job, a worker crash and
# re-run, a malformed frame.  Fails if any valgrind log is non-empty.
set -u
W=$1 C=$2 D=$3
rm -rf "$D"; mkdir -p "$D"
VG="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
--show-leak-kinds=definite,indirect --trace-children=yes \
--trace-children-skip=/bin/*,/usr/bin/*,/usr/local/bin/* --log-file=$D/vg.%p.log"
wrap=$D/worker
printf '#!/bin/sh\nexec %s %s "$@"\n' "$VG" "$W" >"$wrap"
chmod +x "$wrap"
fail=0
run() { # description client-args (options, then WORKER N MODE ...)
	d=$1; shift
	if "$C" "$@" >"$D/out" 2>"$D/err"; then
		echo "ok - $d"
	else
		echo "FAILED - $d"; sed 's/^/  | /' "$D/err" "$D/out"; fail=1
	fi
}
run "200 jobs" "$wrap" 2 many 200 true
run "10 MB each way" "$wrap" 2 bigio 10
run "a job that prints and fails" "$wrap" 2 one 'echo out; echo err >&2; exit 3'
rm -f "$D/once"
run "a worker crash, re-run" -r 1 "$wrap" 2 one "if [ ! -e $D/once ]; then touch $D/once; kill -9 \$PPID; sleep 5; fi; echo again"
run "a malformed frame" "$wrap" 2 malformed neglen
# "==PID==" lines are memcheck's findings; "--PID--" lines are valgrind's
# own notes (e.g. valgrind 3.19 does not know pidfd_open, which the worker
# tries before falling back).
for f in "$D"/vg.*.log; do
	if grep -q '^==' "$f"; then
		echo "valgrind reported in $f:"; sed 's/^/  | /' "$f"; fail=1
	fi
done
n=$(ls "$D"/vg.*.log 2>/dev/null | wc -l)
[ "$fail" -eq 0 ] && echo "valgrind: supervisor and workers clean ($n processes checked)"
exit "$fail"
