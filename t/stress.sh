#!/bin/sh
# t/stress.sh RUNS TEST... - run each test RUNS times on an idle machine and
# RUNS times while CPU hogs keep the scheduler busy, and report runs and
# failures per test.  A race between a test and the processes it drives
# (a pid file read before it is written, a process looked for before it
# exists) shows up under load long before it shows up in one CI run.
#
# TEST is a unit test (t/unit/NAME.t) or a shell test (t/tNNNN-*.sh).
# Shell tests that drive the plugin through make (t2* and up) rotate
# through the start methods, one per run, so RUNS runs cover all three.
#
# Environment:
#   TEST_MAKES    makes to run the shell tests under (default: make)
#   STRESS_HOGS   CPU hogs (`yes >/dev/null`) in the loaded pass (default 1)
#   STRESS_MODES  "plain hog" (default), or one of them
#   STRESS_LOGS   where the output and scratch directories of failed
#                 runs are kept (default build/stress)
# Exits 1 if any run failed.
set -u
[ $# -ge 2 ] || { echo "usage: $0 RUNS TEST..." >&2; exit 2; }
runs=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
makes=${TEST_MAKES:-make}
# a make that does not run would make every shell test fail for the
# wrong reason, and the pool tests (t1*) pass without one
for mk in $makes; do
	"$mk" --version >/dev/null 2>&1 || { echo "stress.sh: $mk does not run" >&2; exit 2; }
done
hogs=${STRESS_HOGS:-1}
modes=${STRESS_MODES:-plain hog}
logs=${STRESS_LOGS:-$root/build/stress}
methods="subprocess spawn fork"
mkdir -p "$logs" || exit 2
# scratch directories of our own (a shared /tmp gets swept by others),
# kept for a run that failed
TMPDIR=$logs/tmp
TEST_KEEP=1
export TMPDIR TEST_KEEP
report=$logs/report.txt
: >"$report"
hog_pids=

stop_hogs() {
	for p in $hog_pids; do kill "$p" 2>/dev/null; done
	for p in $hog_pids; do wait "$p" 2>/dev/null; done
	hog_pids=
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM

# run_one TEST MAKE METHOD LOG: 0 when the test passed.  Passed means:
# exit status 0, a TAP plan, and no "not ok" line.
run_one() {
	case $1 in
	*.t) "$1" >"$4" 2>&1 ;;
	*) TEST_MAKE=$2 TEST_START_METHOD=$3 sh "$1" >"$4" 2>&1 ;;
	esac || return 1
	grep -q '^1\.\.[0-9]' "$4" && ! grep -q '^not ok' "$4"
}

failed_any=0
for mode in $modes; do
	if [ "$mode" = hog ]; then
		i=0
		while [ "$i" -lt "$hogs" ]; do
			yes >/dev/null &
			hog_pids="$hog_pids $!"
			i=$((i + 1))
		done
	fi
	for mk in $makes; do
		mkname=$("$mk" --version | sed -n '1s/^GNU Make /make-/p')
		for t in "$@"; do
			mks=$mkname
			# unit tests do not involve make: once, with the first make
			case $t in *.t)
				mks=unit
				[ "$mk" = "${makes%% *}" ] || continue ;;
			esac
			name=$(basename "$t")
			fails=0
			n=0
			while [ "$n" -lt "$runs" ]; do
				n=$((n + 1))
				# one start method per run, for the tests that go through make
				m=$(echo $methods | cut -d' ' -f$(( (n - 1) % 3 + 1 )))
				case $name in t0*|t1*|*.t) m= ;; esac
				log=$logs/$name.$mks.$mode.$n.log
				rm -rf "$TMPDIR"
				mkdir -p "$TMPDIR" || exit 2
				if run_one "$root/$t" "$mk" "$m" "$log"; then
					rm -f "$log"
				else
					fails=$((fails + 1))
					mv "$TMPDIR" "${log%.log}.scratch"
					echo "FAIL: $t ($mks, $mode, run $n${m:+, $m}): $log" >&2
				fi
			done
			line=$(printf '%-34s %-12s %-5s runs=%-3d failures=%d' "$name" "$mks" "$mode" "$runs" "$fails")
			echo "$line"
			echo "$line" >>"$report"
			[ "$fails" -eq 0 ] || failed_any=1
		done
	done
	stop_hogs
done
echo "# report: $report"
exit "$failed_any"
