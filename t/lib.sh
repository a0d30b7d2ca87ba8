# t/lib.sh - sourced by every shell test: TAP output, a private scratch
# directory, and helpers that run the make under test with the plugin.
# Its own variables are prefixed tl_, so a test's are never clobbered.
#
# Environment:
#   TEST_MAKE             make under test (default: make on PATH)
#   ASYNC_PLUGIN          plugin to load (default: ./asynccompile.so)
#   ASYNC_COMPILE_WORKER  worker executable (default: found by the plugin)
#   TEST_START_METHOD     subprocess | spawn | fork (written to the test config)
#   TEST_PRELOAD          LD_PRELOAD for the make process (ASan runs)
#   TEST_HELPERDIR        where compiled test helpers live (default t/helpers)
#   ASYNC_COMPILE_TRACER  the tracer (default: trace/asynccompile-trace.so)

set -u
TEST_CWD=$PWD
TEST_ROOT=$(cd "$(dirname "$0")/.." && pwd)
TEST_MAKE=${TEST_MAKE:-make}
# tests run make from their scratch directory: a relative path would break
case $TEST_MAKE in /*) ;; */*) TEST_MAKE=$TEST_CWD/$TEST_MAKE ;; esac
ASYNC_PLUGIN=${ASYNC_PLUGIN:-$TEST_ROOT/asynccompile.so}
TEST_HELPERDIR=${TEST_HELPERDIR:-$TEST_ROOT/t/helpers}
export ASYNC_PLUGIN TEST_HELPERDIR
[ -n "${ASYNC_COMPILE_WORKER:-}" ] && export ASYNC_COMPILE_WORKER
# the tracer is never built with sanitizers: the plain one serves every run
ASYNC_COMPILE_TRACER=${ASYNC_COMPILE_TRACER:-$TEST_ROOT/trace/asynccompile-trace.so}
export ASYNC_COMPILE_TRACER
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES ASYNC_COMPILE_CONFIG
# make exports its command line's variables to recipes: under check-asan
# (build.mk VARIANT=asan ...) this tree's own Makefile, run by a test,
# would otherwise take itself for a variant build (t0002's fresh clone)
unset VARIANT SRCDIR EXTRA_CFLAGS EXTRA_LDFLAGS
unset ASYNC_COMPILE_SPECULATE ASYNC_COMPILE_DEBUG

test_count=0
test_failed=0
tl_tmpdir=${TMPDIR:-/tmp}
TRASH=$(mktemp -d "$tl_tmpdir/asynccompile-t.XXXXXX")
STAGE=
trap 'test_cleanup' EXIT
test_cleanup() {
	if [ -z "${TEST_KEEP:-}" ]; then
		rm -rf "$TRASH" ${STAGE:+"$STAGE"}
	elif [ -n "$STAGE" ]; then
		# kept inside the scratch directory, which t/stress.sh keeps or
		# removes whole (the stage may be in /tmp, outside its TMPDIR)
		mv "$STAGE" "$TRASH/.stage"
	fi
}
cd "$TRASH" || exit 1
# async-shell's records go to a store of the test's own, never the user's
XDG_CACHE_HOME=$TRASH/.cache
export XDG_CACHE_HOME
# and the configuration search (config.h) finds no file of the user's
XDG_CONFIG_HOME=$TRASH/.config
export XDG_CONFIG_HOME
# Temporary files of the test's own too: make 4.4 leaves its jobserver
# fifo (TMPDIR/GMfifoPID) behind when a test SIGKILLs it, and in /tmp a
# later make given the same pid (pid_max may be 32768) would warn
# "jobserver mkfifo: ... File exists" and fall back to pipes.  (A make
# run as another user has a TMPDIR of its own: see run_make_as.)
mkdir -m 700 "$TRASH/.tmpdir" || exit 1
TMPDIR=$TRASH/.tmpdir
export TMPDIR
# The recipe waits' socket goes to XDG_RUNTIME_DIR, else TMPDIR: the
# test's own, so a test finds (and counts) only its own collectors.
unset XDG_RUNTIME_DIR

# Write a config the make-level tests share, so the suite can be run once
# per start method.
if [ -n "${TEST_START_METHOD:-}" ]; then
	printf 'start_method: %s\n' "$TEST_START_METHOD" >"$TRASH/.start.yaml"
	export ASYNC_COMPILE_CONFIG="$TRASH/.start.yaml"
fi

# MAKE_UT runs the make under test the way every test must run it: with
# the sanitizer runtime preloaded in ASan runs.  Tests hand it to helpers
# (jsbox.py, script) that start make themselves.
MAKE_UT=$TRASH/.make-under-test
tl_make_ut() { # file make preload
	{
		echo '#!/bin/sh'
		if [ -n "$3" ]; then
			printf 'LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0\n' "'$3'"
			echo 'export LD_PRELOAD ASAN_OPTIONS'
		fi
		printf 'exec %s "$@"\n' "'$2'"
	} >"$1" && chmod 755 "$1"
}
tl_make_ut "$MAKE_UT" "$TEST_MAKE" "${TEST_PRELOAD:-}"

diag() { printf '# %s\n' "$*"; }

# ok DESCRIPTION COMMAND...  -- one test case; output of a failing command
# is shown as TAP diagnostics.
ok() {
	tl_desc=$1; shift
	test_count=$((test_count + 1))
	if tl_out=$("$@" 2>&1); then
		echo "ok $test_count - $tl_desc"
	else
		echo "not ok $test_count - $tl_desc"
		printf '%s\n' "$tl_out" | sed 's/^/#   /'
		test_failed=$((test_failed + 1))
	fi
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count # skip $*"
}

done_testing() {
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
}

# Assertions usable inside ok's command (they print why on failure).
expect_eq() { # expected actual [what]
	[ "$1" = "$2" ] && return 0
	printf 'expected %s: [%s]\n     got: [%s]\n' "${3:-value}" "$1" "$2"
	return 1
}
expect_grep() { # pattern file
	grep -q -e "$1" "$2" && return 0
	printf 'no line matching [%s] in %s:\n' "$1" "$2"; sed 's/^/  | /' "$2"
	return 1
}
expect_no_grep() { # pattern file
	grep -q -e "$1" "$2" || return 0
	printf 'unexpected line matching [%s] in %s:\n' "$1" "$2"; sed 's/^/  | /' "$2"
	return 1
}

# run_make [make args...]: runs the make under test in $TRASH, stdout to
# ./out, stderr to ./err, exit status to $make_status.  A watchdog kills it
# after TEST_MAKE_TIMEOUT seconds (default 60) so a hang is a failure, not
# a stuck suite.
run_make() {
	make_status=0
	timeout -k 5 "${TEST_MAKE_TIMEOUT:-60}" "$MAKE_UT" "$@" >out 2>err || make_status=$?
	return 0
}

# expect_make_ok: make exited 0 and said nothing about jobserver tokens.
expect_make_ok() {
	if [ "$make_status" -ne 0 ]; then
		echo "make exited $make_status"; echo "stdout:"; sed 's/^/  | /' out
		echo "stderr:"; sed 's/^/  | /' err; return 1
	fi
	expect_no_grep 'INTERNAL' err
}

# Cases that run something as another user (root's tests run make, and
# distccd, as nobody) cannot use the tree, the make under test or $TRASH
# as they are: any of them may lie where that user cannot go, e.g. a
# clone in root's 0700 home or a TMPDIR of one's own.  What that user
# runs, reads and writes goes into $STAGE instead, a directory the user
# can reach (0755, made under the TMPDIR the test started with, else
# /tmp; removed with $TRASH).
#
# as_user USER CMD...: CMD as USER, in USER's group and no other.
as_user() {
	tl_u=$1; shift
	setpriv --reuid="$tl_u" --regid="$(id -g "$tl_u")" --clear-groups "$@"
}

# stage_dir USER: make $STAGE and prove USER can reach it.  On failure
# $stage_why says why, for the test's skip.
stage_dir() {
	stage_why=
	id "$1" >/dev/null 2>&1 || { stage_why="no user $1"; return 1; }
	command -v setpriv >/dev/null 2>&1 ||
		{ stage_why="setpriv (util-linux) is not installed"; return 1; }
	if [ -n "$STAGE" ]; then
		as_user "$1" test -x "$STAGE" && return 0
		stage_why="$1 cannot reach $STAGE"; return 1
	fi
	tl_where=$tl_tmpdir
	[ "$tl_tmpdir" = /tmp ] || tl_where="$tl_tmpdir or /tmp"
	for tl_d in "$tl_tmpdir" /tmp; do
		if STAGE=$(mktemp -d "$tl_d/asynccompile-u.XXXXXX" 2>/dev/null); then
			chmod 755 "$STAGE" && as_user "$1" test -x "$STAGE" && return 0
			rm -rf "$STAGE"
		fi
		[ "$tl_tmpdir" = /tmp ] && break
	done
	STAGE=
	stage_why="$1 cannot reach a directory made in $tl_where"
	return 1
}

# stage_for USER: stage_dir, and copy into $STAGE what a make run as USER
# needs, laid out as in the build tree so the plugin finds its neighbours:
#   asynccompile.so              the plugin under test
#   worker/asynccompile-worker   its worker
#   trace/asynccompile-trace.so  the tracer (ASYNC_COMPILE_TRACER), if any
#   make, make-under-test        the make under test, and MAKE_UT's twin
#   tmp/                         TMPDIR (1777)
# (and TEST_PRELOAD, if USER cannot read it where it is).  Fails, with
# $stage_why, unless USER can run the staged make.
stage_for() {
	stage_dir "$1" || return 1
	[ -x "$STAGE/make-under-test" ] && return 0
	tl_p=$ASYNC_PLUGIN
	case $tl_p in /*) ;; *) tl_p=$TEST_CWD/$tl_p ;; esac
	tl_pd=$(dirname "$tl_p")
	tl_w=${ASYNC_COMPILE_WORKER:-}
	case $tl_w in
	'') for tl_c in "$tl_pd/worker/asynccompile-worker" \
			"$tl_pd/../libexec/asynccompile/asynccompile-worker"; do
		[ -x "$tl_c" ] && { tl_w=$tl_c; break; }
	    done ;;
	/*) ;;
	*) tl_w=$TEST_CWD/$tl_w ;;
	esac
	tl_m=$(command -v "$TEST_MAKE") || { stage_why="no make $TEST_MAKE"; return 1; }
	stage_why="cannot copy the build into $STAGE"
	mkdir "$STAGE/worker" "$STAGE/trace" && mkdir -m 1777 "$STAGE/tmp" &&
	cp "$tl_p" "$STAGE/asynccompile.so" && cp "$tl_m" "$STAGE/make" || return 1
	if [ -n "$tl_w" ]; then
		cp "$tl_w" "$STAGE/worker/asynccompile-worker" || return 1
	fi
	tl_t=${ASYNC_COMPILE_TRACER:-$tl_pd/trace/asynccompile-trace.so}
	case $tl_t in /*) ;; *) tl_t=$TEST_CWD/$tl_t ;; esac
	if [ -f "$tl_t" ]; then
		cp "$tl_t" "$STAGE/trace/asynccompile-trace.so" || return 1
	fi
	# TEST_PRELOAD is a list, as LD_PRELOAD is (ASan's runtime and UBSan's)
	tl_pre=
	tl_ifs=$IFS; IFS=': '
	for tl_f in ${TEST_PRELOAD:-}; do
		if ! as_user "$1" test -r "$tl_f"; then
			cp "$tl_f" "$STAGE/" || { IFS=$tl_ifs; return 1; }
			tl_f=$STAGE/${tl_f##*/}
		fi
		tl_pre=${tl_pre:+$tl_pre:}$tl_f
	done
	IFS=$tl_ifs
	tl_make_ut "$STAGE/make-under-test" "$STAGE/make" "$tl_pre" &&
	chmod -R a+rX "$STAGE" || return 1
	if ! as_user "$1" "$STAGE/make-under-test" --version >/dev/null 2>&1; then
		stage_why="$1 cannot run the make staged in $STAGE"
		return 1
	fi
	stage_why=
}

# stage_as_nobody: stage_for nobody, for a test run by root (only root
# can chown a store to another user); fails with $stage_why otherwise.
# The build, the make and $TRASH may be where nobody cannot go (a clone
# in root's 0700 home), hence the staged copy.
stage_as_nobody() {
	if [ "$(id -u)" != 0 ]; then
		stage_why="needs root"
		return 1
	fi
	stage_for nobody
}

# stage_mk FILE DEST: a copy of a test makefile for a make run as another
# user, loading the staged plugin instead of the one under test.
stage_mk() {
	sed "s|$ASYNC_PLUGIN|$STAGE/asynccompile.so|g" "$1" >"$2" && chmod a+r "$2"
}

# run_make_as USER DIR [make args...]: run_make, but the make staged by
# stage_for runs as USER (as_user), in DIR (somewhere in $STAGE), with
# the staged plugin, worker and tracer, TMPDIR $STAGE/tmp, and the config
# in force copied into $STAGE if it lies outside (paths named in it must
# be reachable too).  Its stdout and stderr go to ./out and ./err of the
# caller's directory, its exit status to $make_status.
run_make_as() {
	tl_u=$1 tl_d=$2; shift 2
	make_status=0
	tl_cfg=${ASYNC_COMPILE_CONFIG:-}
	case $tl_cfg in
	''|"$STAGE"/*) ;;
	*) cp "$tl_cfg" "$STAGE/config.yaml" && chmod a+r "$STAGE/config.yaml"
	   # a configuration file must be its reader's own (config_trusted)
	   chown "$tl_u" "$STAGE/config.yaml"
	   tl_cfg=$STAGE/config.yaml ;;
	esac
	(
		cd "$tl_d" || exit 1
		TMPDIR=$STAGE/tmp ASYNC_PLUGIN=$STAGE/asynccompile.so
		export TMPDIR ASYNC_PLUGIN
		if [ -n "$tl_cfg" ]; then export ASYNC_COMPILE_CONFIG="$tl_cfg"; fi
		if [ -x "$STAGE/worker/asynccompile-worker" ]; then
			export ASYNC_COMPILE_WORKER="$STAGE/worker/asynccompile-worker"
		else
			unset ASYNC_COMPILE_WORKER
		fi
		if [ -f "$STAGE/trace/asynccompile-trace.so" ]; then
			export ASYNC_COMPILE_TRACER="$STAGE/trace/asynccompile-trace.so"
		else
			unset ASYNC_COMPILE_TRACER
		fi
		as_user "$tl_u" timeout -k 5 "${TEST_MAKE_TIMEOUT:-60}" \
			"$STAGE/make-under-test" "$@"
	) >out 2>err || make_status=$?
	return 0
}

# Processes (by command-line pattern) still alive that were started by the
# test; used to prove nothing is left behind.
count_procs() { # pattern
	pgrep -f -- "$1" | grep -v "^$$\$" | wc -l
}

# A job command that records when it ran: "span LOG ID SECONDS" appends
# "<ns> +1" and "<ns> -1" lines, from which max_overlap computes the
# largest number of jobs that ran at the same time.
span_cmd() { # log id seconds
	printf 'echo "$$(date +%%s%%N) +1 %s" >>%s; sleep %s; echo "$$(date +%%s%%N) -1 %s" >>%s' \
		"$2" "$1" "$3" "$2" "$1"
}
# barrier_cmd LOG DIR N ID: a job command that logs its span as span_cmd
# does and, in between, waits until N jobs have arrived at the barrier DIR
# (one file each).  Once N are there every later job passes at once.  So
# "N jobs ran at once" is proven by the barrier being passed, not by
# timing; a job still waiting after 30 s gives up, leaves DIR.timeout and
# fails.  Like span_cmd, the text is for a makefile ($ doubled).
barrier_cmd() { # log dir n id
	printf 'echo "$$(date +%%s%%N) +1 %s" >>%s; touch %s/%s; i=0; while [ $$(ls %s | wc -l) -lt %s ]; do i=$$((i + 1)); if [ $$i -gt 600 ]; then touch %s.timeout; exit 1; fi; sleep 0.05; done; echo "$$(date +%%s%%N) -1 %s" >>%s' \
		"$4" "$1" "$2" "$4" "$2" "$3" "$2" "$4" "$1"
}
max_overlap() { # log
	sort -n "$1" | awk '{ cur += $2; if (cur > max) max = cur } END { print max + 0 }'
}
expect_overlap_le() { # n log: at most n spans of log overlap
	[ "$(max_overlap "$2")" -le "$1" ] && return 0
	echo "max overlap $(max_overlap "$2") > $1:"; sort -n "$2" | sed 's/^/  | /'
	return 1
}

# wait_until CMD...: poll (bounded, 10 s) until CMD succeeds
wait_until() {
	tl_i=0
	while ! "$@" >/dev/null 2>&1; do
		tl_i=$((tl_i + 1)); [ "$tl_i" -ge 200 ] && return 1
		sleep 0.05
	done
}
# running MARKER COUNT: exactly that many `sleep MARKER` processes run
running() {
	[ "$(pgrep -f -x "sleep $1" | wc -l)" -eq "$2" ]
}

# flip_byte FILE OFFSET: invert every bit of one byte in place (a change
# whatever the byte was).
flip_byte() {
	tl_b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf %o $((255 - tl_b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# settle: let files just written age past the racy window.  An answer is
# reused only if no file it read changed within 20 ms of the command's
# start (lib/readset.h, RS_RACY_NS): a file's timestamps cannot tell
# that change from a later one.  A test that writes an input and runs
# make at once would see it used once and never reused.  A rule about
# time, not a wait for another process.
settle() {
	sleep 0.05
}

# kill_my_supervisor: SIGKILL this test's pool supervisor (the one
# working in this test's directory), none of another test's.
kill_my_supervisor() {
	for p in $(pgrep -f "asynccompile-worker --supervise"); do
		[ "$(readlink "/proc/$p/cwd")" = "$TRASH" ] && kill -KILL "$p"
	done
}

# write_mk FILE: the test makefile from stdin, with @PLUGIN@ replaced by
# the plugin under test.
write_mk() {
	sed "s|@PLUGIN@|$ASYNC_PLUGIN|g" >"$1"
}

# The major.minor of the make under test.
make_version() {
	"$TEST_MAKE" --version | sed -n '1s/^GNU Make \([0-9.]*\).*/\1/p'
}

# write_config LINE...: a config file with these YAML lines (plus the
# suite's start method), made the one the plugin finds.
write_config() {
	{
		[ -n "${TEST_START_METHOD:-}" ] && printf 'start_method: %s\n' "$TEST_START_METHOD"
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$TRASH/test.yaml"
	ASYNC_COMPILE_CONFIG="$TRASH/test.yaml"
	export ASYNC_COMPILE_CONFIG
}

# pool_init: for tests that drive the worker directly through
# t/helpers/pool-client: sets WORKER and CLIENT (relative paths in the
# environment are relative to where prove ran), or skips the whole test.
pool_init() {
	WORKER=${ASYNC_COMPILE_WORKER:-$TEST_ROOT/worker/asynccompile-worker}
	CLIENT=$TEST_HELPERDIR/pool-client
	case $WORKER in /*) ;; *) WORKER=$TEST_CWD/$WORKER ;; esac
	case $CLIENT in /*) ;; *) CLIENT=$TEST_CWD/$CLIENT ;; esac
	[ -x "$WORKER" ] || skip_all "no $WORKER (run make)"
	[ -x "$CLIENT" ] || skip_all "no $CLIENT (run make test-build)"
}

# A zombie waiting for a reaper that may never come (PID 1 here need not
# reap) is as good as gone.
alive() {
	[ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z'
}

# none_left MARKER: no process runs `sleep MARKER` (a number unique to the
# test run, e.g. 1007.$$); polled for at most 5 s.  For jobs too short-lived
# to be reported STARTED, whose pid ./pids never sees.
none_left() {
	tl_i=0
	while pgrep -f "^sleep $1\$" >/dev/null; do
		tl_i=$((tl_i + 1))
		if [ $tl_i -gt 100 ]; then
			echo "# still running: $(pgrep -af "^sleep $1\$")"
			pkill -KILL -f "^sleep $1\$"
			return 1
		fi
		sleep 0.05
	done
}

# gone: every process named in ./pids (written by pool-client -p) has
# exited, and so has every member of each job's process group (a job's pid
# is its group id); polled for at most 5 s.  Pid-based, so runs of the
# suite in parallel cannot confuse it.
gone() {
	tl_i=0
	while :; do
		tl_left=
		while read -r tl_what tl_pid; do
			case $tl_what in
			job)
				for tl_p in $(pgrep -g "$tl_pid"); do
					alive "$tl_p" && tl_left="$tl_left $tl_p"
				done ;;
			supervisor|worker)
				alive "$tl_pid" && tl_left="$tl_left $tl_pid" ;;
			esac
		done <pids
		[ -z "$tl_left" ] && return 0
		tl_i=$((tl_i + 1))
		if [ $tl_i -gt 100 ]; then
			echo "still alive:$tl_left"; cat pids
			ps -o pid,ppid,pgid,stat,args -p "$(echo $tl_left | tr ' ' ,)"
			return 1
		fi
		sleep 0.05
	done
}

# $(shell) against $(async-shell) on the same inputs (t4062, t4064, t4067, t4068): the
# test makes the directories "sh" and "as"; variant_mk FILE writes stdin
# into both, FN replaced by the function's name; both CMD... runs in each;
# run_both ARGS runs make in each (outputs in sh.out/as.out, sh.err/as.err,
# statuses in sh_status/as_status); same_answers compares them.
variant_mk() { # file: stdin with FN replaced, into both directories
	tl_text=$(cat)
	printf '%s\n' "$tl_text" | sed 's/FN/shell/g' | write_mk "sh/$1"
	printf '%s\n' "$tl_text" | sed 's/FN/async-shell/g' | write_mk "as/$1"
}
both() { # cmd...: run in both directories
	(cd sh && "$@") && (cd as && "$@")
}
run_both() {
	for tl_d in sh as; do
		(cd $tl_d && run_make "$@"; echo "$make_status" >.status)
		cp $tl_d/out $tl_d.out; cp $tl_d/err $tl_d.err
	done
	sh_status=$(cat sh/.status); as_status=$(cat as/.status)
}
same_answers() {
	expect_eq "$sh_status" "$as_status" "make's status (\$(shell) vs async-shell)" &&
	expect_eq "$(grep -v '^make' sh.out)" "$(grep -v '^make' as.out)" "output (\$(shell) vs async-shell)"
}
# slow_mk: slow.mk in both directories, a makefile that takes 0.3 s to
# read; included before the calls, speculation has started (or finished)
# the recorded commands by the time they are asked.
slow_mk() {
	echo 'SLOW := $(shell sleep 0.3)' | write_mk sh/slow.mk
	cp sh/slow.mk as/slow.mk
}

# kbuild_fixture DIR NAME: a kernel module NAME (NAME.c, Kbuild) in DIR
# and a fragment directory $TRASH/fragment whose asynccompile-kbuild.mk
# loads the plugin under test (t5076, t5077).
kbuild_fixture() {
	mkdir -p "$1"
	cat >"$1/$2.c" <<'EOF2'
#include <linux/module.h>
#include <linux/init.h>
static int __init hello_init(void) { pr_info("hello\n"); return 0; }
static void __exit hello_exit(void) { }
module_init(hello_init);
module_exit(hello_exit);
MODULE_LICENSE("GPL");
EOF2
	echo "obj-m := $2.o" >"$1/Kbuild"
	FRAG=$TRASH/fragment
	[ -d "$FRAG" ] && return
	mkdir "$FRAG"
	cp "$TEST_ROOT/asynccompile-kbuild.mk" "$FRAG/"
	ln -s "$ASYNC_PLUGIN" "$FRAG/asynccompile.so"
	ln -s "$TEST_ROOT/worker" "$FRAG/worker"
}
