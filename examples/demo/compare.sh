#!/bin/sh
# examples/demo/compare.sh MAKE PLUGIN - `make demo`'s table: a clean
# build of the demo program with stock make (STOCK=1: probes through
# $(shell), one after another, objects by a pattern rule) and with the
# plugin, each in a scratch copy, timed, side by side.
#
#     sh examples/demo/compare.sh make "$PWD/asynccompile.so"
#
# Both builds get the same -jN: the one make was given, else the demo's
# own default, the CPU count.  The program is not run: only the build is
# timed.
set -u
make=${1:?usage: compare.sh MAKE PLUGIN}
plugin=${2:?usage: compare.sh MAKE PLUGIN}
here=$(cd "$(dirname "$0")" && pwd)
mk=$(cd "$here/../.." && pwd)/asynccompile.mk
tmp=$(mktemp -d "${TMPDIR:-/tmp}/asynccompile-demo.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

now() { date +%s%N; }
timed_build() { # name [make args...]: prints nanoseconds
	name=$1; shift
	mkdir "$tmp/$name" &&
	cp "$here"/*.c "$here"/*.h "$here"/Makefile "$tmp/$name"/ || return 1
	t0=$(now)
	if ! $make --no-print-directory -s -C "$tmp/$name" \
		ASYNC_COMPILE_PLUGIN="$plugin" ASYNC_COMPILE_MK="$mk" "$@" wordstat \
		>"$tmp/$name.log" 2>&1; then
		echo "compare.sh: the $name build failed:" >&2
		cat "$tmp/$name.log" >&2
		return 1
	fi
	t1=$(now)
	echo $((t1 - t0))
}

stock=$(timed_build stock STOCK=1) || exit 1
plugged=$(timed_build asynccompile) || exit 1
awk -v s="$stock" -v p="$plugged" 'BEGIN {
	print "asynccompile demo: a clean build of wordstat (12 probes, 4 compiles, link)"
	printf "  %-10s %13s %13s %7s\n", "", "stock make", "asynccompile", "ratio"
	printf "  %-10s %11.2f s %11.2f s %6.2fx\n", "build time", s / 1e9, p / 1e9, (p > 0 ? s / p : 0)
}'
