#!/bin/sh
# A peer that breaks the protocol gets a clear error and the supervisor or
# worker exits non-zero at once: never a crash, never a hang.
. "$(dirname "$0")/lib.sh"
pool_init

# malformed KIND MESSAGE: the supervisor answers with an ERROR frame saying
# MESSAGE, says it on stderr too, and exits 1.
malformed() {
	timeout 20 "$CLIENT" "$WORKER" 2 malformed "$1" >res 2>log ||
		{ echo "client failed ($?)"; cat res log; return 1; }
	expect_grep "^error: $2" res && expect_grep '^supervisor_exit=1$' res &&
	expect_grep "^asynccompile-worker: protocol error: $2" log
}

ok 'negative payload length' malformed neglen 'frame header: payload length -5 is negative'
ok 'job id below -1' malformed badid 'frame header: job id -7 is invalid'
ok 'unknown message type' malformed badtype 'unexpected message type 99 on job 1 for the supervisor'
ok 'JOB payload cut short' malformed shortjob 'job 1: JOB: message too short'
ok 'EOF in the middle of a payload' malformed truncated \
	'truncated frame: got 3 of 100 payload bytes for job 1'
ok 'a JOB before the HELLO' malformed nohello 'expected HELLO as the first frame'
ok 'another protocol version' malformed version \
	"protocol version mismatch: peer speaks 99, I speak $(sed -n 's/^#define PROTO_VERSION \([0-9]*\)$/\1/p' "$TEST_ROOT/lib/proto.h")"

# A worker fed garbage directly (no supervisor in between).
t_worker_garbage() {
	st=0
	printf 'this is not a frame at all' | timeout 20 "$WORKER" --worker 3 >out 2>err || st=$?
	expect_eq 1 "$st" 'exit status' &&
	expect_grep '^asynccompile-worker 3: protocol error: ' err
}
ok 'a worker fed garbage reports a protocol error and exits 1' t_worker_garbage

done_testing
