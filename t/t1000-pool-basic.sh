#!/bin/sh
# The worker pool behind `asynccompile-worker --supervise`: how a job's
# command is run and what comes back, driven by t/helpers/pool-client.
. "$(dirname "$0")/lib.sh"
pool_init

# job [client options] CMD: one job on a 2-worker pool; result lines in
# ./res, the job's stdout in ./out, client diagnostics in ./log.
job() {
	rm -f out res log
	"$CLIENT" "$WORKER" 2 one -O out "$@" >res 2>log || {
		echo "pool-client failed:"; cat log res; return 1; }
}
expect_res() { # line-in-res...
	for l in "$@"; do expect_grep "^$l\$" res || return 1; done
}

t_version() {
	"$WORKER" --version >v || return 1
	proto=$(sed -n 's/^#define PROTO_VERSION \([0-9]*\)$/\1/p' "$TEST_ROOT/lib/proto.h")
	expect_grep "^asynccompile-worker .*(protocol $proto)\$" v || return 1
	st=0; "$WORKER" --bogus 2>e || st=$?
	expect_eq 2 "$st" "exit status of bad usage" && expect_grep usage e
}
ok 'worker executable: --version, and usage errors exit 2' t_version

t_direct() {
	job 'echo a   b' && expect_res status=0 flags=none attempts=1 &&
	expect_eq 'a b' "$(cat out)" stdout
}
ok 'a command without metacharacters runs (split on blanks)' t_direct

t_shell() {
	job 'echo a | tr a b' && expect_res status=0 && expect_eq b "$(cat out)" stdout &&
	job 'echo "x  y"' && expect_eq 'x  y' "$(cat out)" 'quoted stdout'
}
ok 'a command with metacharacters runs through the shell' t_shell

t_keyword() {
	job 'exit 3' && expect_res status=3 flags=none &&
	job 'cd /' && expect_res status=0
}
ok 'shell keywords and builtins go to the shell' t_keyword

t_noexec_direct() {
	job 'no-such-command-t1000 arg' &&
	expect_res status=127 flags=SPAWN_FAILED &&
	expect_grep "^err: asynccompile: cannot run 'no-such-command-t1000': No such file or directory\$" res
}
ok 'a missing program (direct exec) is status 127 with a reason' t_noexec_direct

t_noexec_shell() {
	job 'no-such-command-t1000 $HOME' && expect_res status=127 flags=none &&
	expect_grep 'not found' res
}
ok 'a missing program through the shell is status 127 too' t_noexec_shell

t_signal() {
	job 'kill -TERM $$' && expect_res status=143 flags=none
}
ok 'death by signal N is status 128+N' t_signal

t_stdin() {
	job -i 'hello
world' cat && expect_res status=0 && expect_eq 'hello
world' "$(cat out)" stdout &&
	job cat && expect_res status=0 out_bytes=0
}
ok 'stdin carries the job input; without input it is /dev/null' t_stdin

t_env() {
	job -e FOO=bar -e HOME=/elsewhere 'echo $FOO $HOME' &&
	expect_eq 'bar /elsewhere' "$(cat out)" stdout &&
	job -e HOME 'echo "[${HOME-unset}]"' && expect_eq '[unset]' "$(cat out)" 'unset var'
}
ok 'job env adds, overrides and (K without =) removes variables' t_env

t_path() {
	mkdir -p bin && printf '#!/bin/sh\necho tool "$@"\n' >bin/mytool &&
	printf 'echo no shebang\n' >bin/plain && chmod +x bin/mytool bin/plain &&
	job -e "PATH=$TRASH/bin:/usr/bin:/bin" 'mytool x' &&
	expect_eq 'tool x' "$(cat out)" 'stdout via job PATH' &&
	job -e "PATH=$TRASH/bin:/usr/bin:/bin" 'plain' &&
	expect_eq 'no shebang' "$(cat out)" 'script without #!' &&
	job -e PATH=/nonexistent 'ls' && expect_res status=127 flags=SPAWN_FAILED
}
ok 'direct exec searches the job PATH, not the worker one' t_path

t_cwd() {
	mkdir -p sub/dir && printf '#!/bin/sh\necho here\n' >sub/dir/t && chmod +x sub/dir/t &&
	job -C "$TRASH/sub/dir" pwd && expect_eq "$TRASH/sub/dir" "$(cat out)" pwd &&
	job -C "$TRASH/sub" dir/t && expect_eq here "$(cat out)" 'relative program' &&
	job -C /nonexistent/t1000 pwd && expect_res status=127 flags=SPAWN_FAILED &&
	expect_grep "cannot change to directory '/nonexistent/t1000'" res
}
ok 'the job runs in its cwd; a missing cwd is reported' t_cwd

t_cap() {
	job -m 1000 'seq 1 100000; seq 1 100000 >&2' &&
	expect_res status=0 flags=TRUNCATED out_bytes=1000 &&
	expect_grep '^err: asynccompile: stdout truncated at 1000 bytes$' res &&
	expect_grep '^err: asynccompile: stderr truncated at 1000 bytes$' res
}
ok 'output beyond max_output is dropped, flagged and noted' t_cap

t_isolation() {
	job 'ls /proc/$$/fd' && expect_eq '0 1 2' "$(cat out | tr '\n' ' ' | sed 's/ $//')" 'open fds' &&
	job 'cut -d" " -f5 /proc/$$/stat; echo $$' &&
	expect_eq 1 "$(uniq out | wc -l)" 'pgid = pid' &&
	job 'grep ^SigBlk /proc/self/status' &&
	expect_eq 'SigBlk:	0000000000000000' "$(cat out)" 'signal mask' &&
	job 'yes | head -n 1' && expect_res status=0 err_bytes=0
}
ok 'jobs get only 0-2, their own group, no blocked signals, default SIGPIPE' t_isolation

t_many() {
	"$CLIENT" "$WORKER" 2 many 10000 true >res 2>log || { cat log res; return 1; }
	expect_res 'results=10000 failed=0'
}
ok '10000 pipelined `true` jobs on 2 workers: one RESULT each, by id' t_many
[ -f log ] && diag "$(grep 'jobs/sec' log) (true, 2 workers)"

done_testing
