#!/bin/sh
# bench/run.sh - `make bench`: fetch real third-party sources (never
# committed: they land in bench/out/, which git ignores) and run the
# workloads in bench/bench.py.  Results: stdout and bench/out/results.txt.
#
# A failed download is reported and the workloads that need no download
# still run (the probe workload then uses a clearly labelled fallback flag
# list).  Knobs: see the BENCH_* variables in bench/bench.py.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/bench/out
start=$(date +%s)
mkdir -p "$out"

[ -f "$top/asynccompile.so" ] || { echo "bench: $top/asynccompile.so not built (run make)" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "bench: python3 is needed" >&2; exit 1; }

fetch() { # debian-source-package -> prints the unpacked tree, or nothing
	if tree=$(sh "$top/bench/fetch-source.sh" "$1" "$out/src/$1" | tail -n1) && [ -d "$tree" ]; then
		echo "$tree"
	else
		echo "bench: WARNING: could not fetch the Debian source package '$1'; workloads that need it are skipped or use a fallback" >&2
	fi
}
busybox=$(fetch busybox)
lua=$(fetch lua5.4)
# Workload 5 only: 150 MB to download, 1.7 GB unpacked (kept in bench/out).
linux_version=6.12
linux=
case " ${BENCH_ONLY:-5} " in
*" 5 "*)
	linux=$(sh "$top/bench/fetch-linux.sh" "$linux_version" "$out/src/linux" | tail -n1)
	if [ -z "$linux" ] || [ ! -d "$linux" ]; then
		echo "bench: WARNING: could not fetch linux-source-$linux_version; workload 5 is skipped" >&2
		linux=
	fi
	;;
esac

python3 "$top/bench/bench.py" --top "$top" --out "$out" --busybox "$busybox" --lua "$lua" \
	--linux "$linux" --linux-version "$linux_version"
rc=$?
echo "bench: total time $(( $(date +%s) - start ))s"
exit $rc
