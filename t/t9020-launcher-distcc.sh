#!/bin/sh
# launcher: [distcc] against a real distccd on loopback: the compiles go
# to the daemon, errors come back, probes stay correct, and ccache in
# front of distcc caches what distcc built.
. "$(dirname "$0")/lib.sh"

command -v distcc >/dev/null 2>&1 || skip_all "distcc is not installed (apt-get install distcc)"
command -v distccd >/dev/null 2>&1 || skip_all "distccd is not installed (apt-get install distcc)"
command -v gcc >/dev/null 2>&1 || skip_all "gcc is not installed"
command -v perl >/dev/null 2>&1 || skip_all "perl is not installed (needed to find a free port)"
unset DISTCC_HOSTS DISTCC_POTENTIAL_HOSTS DISTCC_VERBOSE CCACHE_PREFIX CCACHE_DISABLE \
	CCACHE_RECACHE CCACHE_READONLY CCACHE_DIR

# distccd will not run as root without --user; as nobody it must still
# write its log and temporary files, so they are in a directory open to
# it, in $STAGE ($TRASH may be where nobody cannot go: under a TMPDIR of
# root's own).
user_opt=
if [ "$(id -u)" -eq 0 ]; then
	stage_dir nobody || skip_all "distccd runs as nobody for root: $stage_why"
	user_opt="--user nobody"
	dd_dir=$STAGE/distccd
	mkdir -p "$dd_dir/tmp"
	chmod 777 "$dd_dir"
	chmod 1777 "$dd_dir/tmp"
else
	dd_dir=$TRASH/distccd
	mkdir -p "$dd_dir/tmp"
fi

free_port() {
	perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0,
			Proto => "tcp", Listen => 1) or die "bind: $!\n";
		print $s->sockport, "\n";'
}
port_open() { # port
	perl -MIO::Socket::INET -e '
		exit !IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $ARGV[0],
			Proto => "tcp", Timeout => 1);' "$1"
}

dd_pid=
port=
# kill_daemon SIGNAL: signal distccd and its children.  It leads its own
# process group, which holds its preforked children.
kill_daemon() {
	if [ "$(ps -o pgid= -p "$dd_pid" 2>/dev/null | tr -d ' ')" = "$dd_pid" ]; then
		kill -s "$1" -- "-$dd_pid" 2>/dev/null
	else
		kill -s "$1" "$dd_pid" 2>/dev/null
	fi
}
stop_distccd() {
	[ -n "$dd_pid" ] || return 0
	kill_daemon TERM
	i=0
	while kill -0 "$dd_pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	kill -0 "$dd_pid" 2>/dev/null && kill_daemon KILL
	wait "$dd_pid" 2>/dev/null
	i=0
	while [ "$(count_procs "distccd .*--port $port ")" -gt 0 ] && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	dd_pid=
}
trap 'stop_distccd; test_cleanup' EXIT
trap 'exit 129' HUP INT TERM

# Start the daemon on a free loopback port; the port picked can be taken
# by someone else before distccd binds it, hence a few tries.
start_distccd() {
	for try in 1 2 3 4 5; do
		port=$(free_port) || return 1
		TMPDIR=$dd_dir/tmp distccd --daemon --no-detach $user_opt \
			--allow 127.0.0.1 --listen 127.0.0.1 --port "$port" \
			--log-file "$dd_dir/log" --log-level info --pid-file "$dd_dir/pid" \
			</dev/null >>"$dd_dir/stderr" 2>&1 &
		dd_pid=$!
		i=0
		while [ $i -lt 100 ]; do
			port_open "$port" && return 0
			kill -0 "$dd_pid" 2>/dev/null || break
			sleep 0.1; i=$((i + 1))
		done
		stop_distccd
	done
	return 1
}

if ! start_distccd; then
	echo "not ok 1 - distccd starts on loopback"
	sed 's/^/#   /' "$dd_dir/stderr" "$dd_dir/log" 2>/dev/null
	echo "1..1"
	exit 1
fi
ok "distccd listens on 127.0.0.1:$port" port_open "$port"

# Lines in the daemon's log matching a pattern.  The daemon logs a job's
# summary after the client already has its result, so wait (bounded) for
# the expected count to show up.
log_count() { # pattern
	grep -c -e "$1" "$dd_dir/log" 2>/dev/null
}
await_log() { # pattern count
	i=0
	while [ "$(log_count "$1")" -lt "$2" ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	expect_eq "$2" "$(log_count "$1")" "log lines matching $1"
}

mkdir distcc-state
for i in 1 2 3; do
	printf 'int f%d(int x) { return x * %d; }\n' $i $i >s$i.c
done
cat >Makefile <<EOF
load $ASYNC_PLUGIN
OBJS = s1.o s2.o s3.o
all: \$(OBJS)
\$(OBJS) &:
	\$(foreach o,\$(OBJS),\$(async-compile \$o,gcc -c \$(o:.o=.c) -o \$o))
	\$(async-wait \$(OBJS))
EOF
# DISTCC_FALLBACK=0: a compile distcc could not send fails instead of
# quietly running here.  DISTCC_BACKOFF_PERIOD=0: after a compile error
# distcc shuns the host for 60s by default, which with fallback off fails
# every later compile with status 116.
distcc_config() { # launcher [extra env lines]
	l=$1; shift
	write_config "launcher: $l" "env:" \
		"  DISTCC_HOSTS: \"127.0.0.1:$port/2\"" \
		"  DISTCC_FALLBACK: \"0\"" \
		"  DISTCC_BACKOFF_PERIOD: \"0\"" \
		"  DISTCC_DIR: $TRASH/distcc-state" "$@"
}

objects_ok() {
	for i in 1 2 3; do
		nm s$i.o 2>&1 | grep -q " T f$i\$" || { echo "s$i.o: no f$i"; nm s$i.o; return 1; }
	done
}

distcc_config "[distcc]"
run_make -j2
ok "three compiles through launcher [distcc]" expect_make_ok
ok "the commands were echoed with the launcher" expect_grep '^distcc gcc -c s1.c -o s1.o$' out
ok "the objects exist" objects_ok
ok "the daemon compiled each one: three COMPILE_OK" await_log COMPILE_OK 3
ok "... for s1.c, s2.c and s3.c" sh -c 'for s in s1.c s2.c s3.c; do grep -q "compile from $s to" "$0" || exit 1; done' "$dd_dir/log"

# A compile error on the daemon comes back as the job's failure.
echo 'int broken(void) { return }' >s2.c
rm -f s1.o s2.o s3.o
run_make -j2
ok "a remote compile error fails the recipe" expect_eq 2 "$make_status" "exit status"
ok "the failure names the job" expect_grep 's2.o (status 1)' err
ok "the compiler's message came back" expect_grep 's2.c:1:.*error' err
ok "the daemon logged COMPILE_ERROR" await_log COMPILE_ERROR 1
ok "no jobserver token message after the failure" expect_no_grep INTERNAL err
ok "the other two compiled remotely" await_log COMPILE_OK 5
printf 'int f2(int x) { return x * 2; }\n' >s2.c
rm -f s1.o s3.o
run_make -j2
ok "with the error fixed the next build works at once" expect_make_ok
ok "... remotely" await_log COMPILE_OK 8

# Probes under the launcher: distcc runs what it cannot distribute
# locally, so the answers are the plain ones.
oks=$(log_count COMPILE_OK)
cat >probe.mk <<EOF
load $ASYNC_PLUGIN
include $TEST_ROOT/asynccompile.mk
CC = gcc
\$(call async-cc-option,-fstack-protector-strong)
\$(call async-cc-option,-fno-such-flag-xyz)
\$(call async-ld-option,--build-id)
\$(call async-ld-option,--no-such-ld-option-xyz)
\$(async-probes-wait)
\$(info probes=[\$(call cc-option-result,-fstack-protector-strong)] [\$(call cc-option-result,-fno-such-flag-xyz)] [\$(call ld-option-result,--build-id)] [\$(call ld-option-result,--no-such-ld-option-xyz)])
all: ; @:
EOF
run_make -f probe.mk -j2
ok "probes under launcher [distcc]" expect_make_ok
ok "probes give the plain answers" expect_grep '^probes=\[-fstack-protector-strong\] \[\] \[--build-id\] \[\]$' out

if command -v ccache >/dev/null 2>&1; then
	# ccache in front of distcc, the way ccache recommends: ccache runs the
	# compiler with CCACHE_PREFIX in front of it, and hashes the real
	# compiler, not distcc.
	distcc_config "[ccache]" "  CCACHE_DIR: $TRASH/ccache" "  CCACHE_PREFIX: distcc"
	rm -f s1.o s2.o s3.o
	run_make -j2
	ok "launcher [ccache] with CCACHE_PREFIX=distcc builds" expect_make_ok
	ok "... the objects" objects_ok
	ok "a cold cache: distcc compiled all three" await_log COMPILE_OK $((oks + 3))
	rm -f s1.o s2.o s3.o
	run_make -j2
	ok "the second build succeeds" expect_make_ok
	ok "a warm cache: the objects are back" objects_ok
	ok "a warm cache: distcc was not asked again" expect_eq $((oks + 3)) "$(log_count COMPILE_OK)" "COMPILE_OK lines"
	hits=$(CCACHE_DIR=$TRASH/ccache ccache --print-stats 2>/dev/null |
		awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { n += $2 } END { print n + 0 }')
	ok "ccache counted three hits" expect_eq 3 "$hits" "cache hits"

	# launcher: [ccache, distcc] works too, but ccache then hashes distcc's
	# binary instead of gcc's (its manual advises against it).
	distcc_config "[ccache, distcc]" "  CCACHE_DIR: $TRASH/ccache2"
	rm -f s1.o s2.o s3.o
	run_make -j2
	ok "launcher [ccache, distcc] builds" expect_make_ok
	ok "... the objects" objects_ok
	ok "... through the daemon" await_log COMPILE_OK $((oks + 6))
else
	for c in $(seq 10); do skip "ccache is not installed (apt-get install ccache)"; done
fi

stop_distccd
ok "no distccd process is left" expect_eq 0 "$(count_procs "distccd .*--port $port ")" "distccd processes"

done_testing
