#!/bin/sh
# A worker that dies mid-job is replaced and the job re-run, up to retries.
. "$(dirname "$0")/lib.sh"

WORKER=${ASYNC_COMPILE_WORKER:-$TEST_ROOT/worker/asynccompile-worker}
CLIENT=$TEST_HELPERDIR/pool-client
[ -x "$WORKER" ] || skip_all "no $WORKER (run make)"
[ -x "$CLIENT" ] || skip_all "no $CLIENT (run make test-build)"

# The job's parent is its worker: the first attempt kills it, the re-run
# finds the marker and succeeds.  `sleep 1007` shows whether the crashed
# attempt's group was cleaned up.
CRASH='if [ -e marker ]; then echo second; else touch marker; kill -9 $PPID; sleep 1007; fi'

t_rerun() {
	rm -f marker
	"$CLIENT" "$WORKER" 2 one -O out "$CRASH" >res 2>log || { cat log; return 1; }
	expect_grep '^status=0$' res && expect_grep '^attempts=2$' res &&
	expect_eq second "$(cat out)" stdout &&
	expect_grep 're-running job 1 (attempt 2 of 2)' log &&
	[ "$(count_procs 'sleep 1007')" -eq 0 ] || { pgrep -af 'sleep 1007'; return 1; }
}
ok 'a job whose worker dies is re-run on a new worker and succeeds' t_rerun

t_giveup() {
	rm -f marker
	"$CLIENT" "$WORKER" 2 one -r 0 "$CRASH" >res 2>log || { cat log; return 1; }
	expect_grep '^status=125$' res && expect_grep '^flags=CRASHED$' res &&
	expect_grep '^attempts=1$' res &&
	expect_grep '^err: asynccompile: worker [01] died while running this job (attempt 1 of 1); giving up$' res &&
	[ "$(count_procs 'sleep 1007')" -eq 0 ] || { pgrep -af 'sleep 1007'; return 1; }
}
ok 'with retries 0 it fails with RES_CRASHED and a note' t_giveup

t_keeps_serving() {
	rm -rf crashed
	"$CLIENT" "$WORKER" 2 many 300 'mkdir crashed 2>/dev/null && kill -9 $PPID; true' \
		>res 2>log || { cat log res; return 1; }
	expect_grep '^results=300 failed=0$' res && expect_grep 're-running job' log
}
ok 'a crash in the middle of 300 pipelined jobs loses none of them' t_keeps_serving

done_testing
