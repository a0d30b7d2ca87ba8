#!/bin/sh
# test: per-start-method
# launcher: [sccache] across many build steps.  sccache starts a server on
# first use, in a session of its own; the server must outlive the step
# that started it (daemons: keep, the default) so the next steps use it,
# and must still end with the pool, so nothing outlives make.  (The first
# step runs alone: clients that find no server at the same moment race
# to start one, sccache's own affair.)
. "$(dirname "$0")/lib.sh"
if ! command -v sccache >/dev/null 2>&1 || ! command -v cc >/dev/null 2>&1; then
	skip_all "sccache or cc is not installed (Debian package sccache)"
fi
SCCACHE_DIR=$TRASH/sccache
# Not the default port 4226 another user may hold, and a new one for each
# build: the last build's server was killed with its sockets open, so its
# port may linger in TIME_WAIT and refuse the next server.
# Below Linux's ephemeral range (32768 and up by default), where any TCP
# client's local port, or a connection in TIME_WAIT, can take the one a
# server is about to bind ("Address already in use"); four ports: two
# builds and their retries.
port=$((20000 + $$ % 3000 * 4))
SCCACHE_SERVER_PORT=$port
SCCACHE_IDLE_TIMEOUT=120
SCCACHE_ERROR_LOG=$TRASH/sccache.log
export SCCACHE_DIR SCCACHE_SERVER_PORT SCCACHE_IDLE_TIMEOUT SCCACHE_ERROR_LOG
for i in 1 2 3 4; do printf 'int f%d(void) { return %d; }\n' "$i" "$i" >f$i.c; done
write_config "launcher: [sccache]" "workers: 4"
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	$(async-compile f1,cc -c f1.c -o f1.o)
	$(async-wait f1)
	$(foreach i,2 3 4,$(async-compile f$i,cc -c f$i.c -o f$i.o))
	$(async-wait)
	@sccache --show-stats
EOF2
# Processes that carry this test's sccache directory in their environment.
ours() {
	for e in /proc/[0-9]*/environ; do
		tr '\0' '\n' <"$e" 2>/dev/null | grep -qx "SCCACHE_DIR=$SCCACHE_DIR" &&
			echo "${e%/environ}"
	done
	return 0
}
# sccache_build: make -j4, once more if sccache's own client gave up on
# its server (it does, rarely, beside a busy CPU, whoever runs it: "Timed
# out waiting for server startup", "Connection to server timed out"; and
# once in a CI run, the second build's first client: "Failed to send data
# to or receive data from server ... Connection reset by peer", cause not
# known, so the retry prints the tail of sccache.log).  The assertions are about the plugin.
sccache_build() { # port-to-retry-on
	run_make -j4
	if [ "$make_status" -ne 0 ] && grep -q 'Timed out waiting for server startup\|Connection to server timed out\|Failed to send data to or receive data from server' err; then
		diag "sccache's client gave up on its server ($(grep -m1 'caused by' err)); building again"
		[ ! -f "$SCCACHE_ERROR_LOG" ] || tail -n 5 "$SCCACHE_ERROR_LOG" | sed 's/^/sccache.log: /' | while read -r l; do diag "$l"; done
		rm -f f1.o f2.o f3.o f4.o
		# on a port of its own: the server the failed client started may
		# still hold the last one while it dies with make's pool
		SCCACHE_SERVER_PORT=$1
		run_make -j4
	fi
}
stat_of() { # label: the number sccache's stats give it
	sed -n "s/^$1  *\([0-9][0-9]*\)\$/\1/p" out | head -n 1
}

sccache_build $((port + 2))
ok "first build: make exits 0" expect_make_ok
ok "first build: every object is built" sh -c 'ls f1.o f2.o f3.o f4.o'
ok "first build: the server never went away under a step" \
	expect_no_grep 'shut down unexpectedly\|compiling locally' err
ok "first build: one server took all four compiles" expect_eq 4 "$(stat_of 'Compile requests')" "compile requests"
ok "first build: nothing of sccache's outlives make" wait_until sh -c '[ -z "$(ours)" ]'

rm -f f1.o f2.o f3.o f4.o
SCCACHE_SERVER_PORT=$((port + 1))
sccache_build $((port + 3))
ok "second build: make exits 0" expect_make_ok
# sccache writes cache entries after answering; one still being written
# when make ends (and the server with it) is a miss next time.
hits=$(stat_of 'Cache hits')
diag "second build: ${hits:-no} cache hits of 4"
ok "second build: cache hits" test "${hits:-0}" -ge 1
ok "second build: nothing of sccache's outlives make" wait_until sh -c '[ -z "$(ours)" ]'

sccache --stop-server >/dev/null 2>&1

# The rule itself, with a daemon of our own (the step ends only once its
# daemon has its session, so which side of the rule it is on is certain): a process a step leaves in a
# session of its own stays until the pool ends (keep) or goes with the
# step (kill); one left in the step's own session (a new process group
# only, as timeout(1) makes) always goes with the step.
M=$$
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	$(async-compile d,rm -f d.sid; setsid sh -c 'echo >d.sid; exec sleep 1631.$(M)' & i=0; while [ ! -s d.sid ] && [ $$i -lt 1000 ]; do sleep 0.01; i=$$((i + 1)); done; setsid sh -c 'sleep 1632.$(M) & exec sleep 0' ; sh -c 'set -m; sleep 1633.$(M) & echo $$! >pg.pid')
	$(async-wait)
	@# pgrep with the ASan runtime preloaded (check-asan) can hang at start
	@for p in 1631 1632 1633; do if env -u LD_PRELOAD pgrep -f "^sleep $$p.$(M)\$$" >/dev/null; then echo "$$p alive"; else echo "$$p gone"; fi; done
EOF2
for mode in keep kill; do
	write_config "daemons: $mode"
	run_make M=$M
	ok "daemons: $mode: make exits 0" expect_make_ok
	if [ $mode = keep ]; then
		ok "daemons: keep: a setsid daemon outlives its step" expect_grep '^1631 alive$' out
		ok "daemons: keep: so does a daemon's child in that session" expect_grep '^1632 alive$' out
	else
		ok "daemons: kill: a setsid daemon goes with its step" expect_grep '^1631 gone$' out
		ok "daemons: kill: and so does a daemon's child" expect_grep '^1632 gone$' out
	fi
	ok "daemons: $mode: a process that only left the step's group goes with it" \
		expect_grep '^1633 gone$' out
	ok "daemons: $mode: nothing outlives make" none_left "163[123]\.$M"
done

done_testing
