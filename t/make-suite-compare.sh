#!/bin/bash
# t/make-suite-compare.sh - loading the plugin must not change what make
# does.  GNU make 4.4.1's own test suite (tests/run_make_tests.pl in the
# built tree .ci/build-make44.sh keeps) runs twice from the same scratch
# directory S through the same path, S/bin/make:
#
#   plain   S/bin/make is a symbolic link to the built make;
#   loaded  S/bin/make is a script that runs the built make under its own
#           name (exec -a) with --eval='load S/lib/asynccompile.so' added.
#           Every make the suite starts, sub-makes and re-executions
#           included, is $(MAKE) = S/bin/make and loads the plugin (make
#           4.4.1 keeps one copy of the option in MAKEFLAGS and loads an
#           object once).
#
# Every case must then give the same result in both runs (passed in both,
# or failed in both with the same output) once the loaded run's output is
# rid of the documented traces of the load, removed as exact strings that
# contain the unique scratch path S/lib/asynccompile.so: the option in
# MAKEFLAGS (as make writes it, and as a shell echoes it) and the object in
# .LOADED (see t/make-suite-compare.pl).  Nothing else is rewritten.
#
# make also tries to remake every object it loads, as it does makefiles,
# so a pattern rule matching the object's name runs for it (make's suite
# has `a%` rules).  That is make's doing, with any loaded object: the
# categories that still differ are run once more with an inert object in
# the plugin's place (same path, a setup that does nothing), and must give
# exactly, byte for byte, the loaded run's results.
#
# `--self-test` shows that a change is caught: the loaded run (not the
# inert one) also gets --eval='$(warning asynccompile self-test)', on a
# few categories only, and the comparison must fail.
#
#   t/make-suite-compare.sh [--self-test] [PLUGIN]
#
# PLUGIN defaults to ./asynccompile.so, with worker/asynccompile-worker
# next to it.  MAKE_SUITE_SRC overrides the tree (build/make-4.4.1/src);
# KEEP=1 keeps the scratch directory.  Exit 0 when the results agree (or
# when there is no tree: skipped, with the reason), 1 when they differ.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
self_test=0
if [ "${1:-}" = --self-test ]; then
	self_test=1
	shift
fi
plugin=$(realpath "${1:-$top/asynccompile.so}")
worker=$(dirname "$plugin")/worker/asynccompile-worker
src=$(realpath -m "${MAKE_SUITE_SRC:-$top/build/make-4.4.1/src}")
say() { printf 'make-suite-compare: %s\n' "$*"; }

if [ ! -f "$src/tests/run_make_tests.pl" ] || [ ! -x "$src/make" ]; then
	say "skipped: no built GNU make 4.4.1 tree with its test suite in $src (.ci/build-make44.sh keeps one)"
	exit 0
fi
[ -f "$plugin" ] || { say "no plugin $plugin (run make)"; exit 1; }
[ -x "$worker" ] || { say "no worker $worker next to the plugin (run make)"; exit 1; }

S=$(mktemp -d "${TMPDIR:-/tmp}/make-suite.XXXXXX")
# shellcheck disable=SC2064
[ -n "${KEEP:-}" ] || trap "rm -rf '$S'" EXIT
mkdir -p "$S/bin" "$S/lib/worker"
cp "$plugin" "$S/lib/asynccompile.so"
cp "$worker" "$S/lib/worker/asynccompile-worker"
loaded=$S/lib/asynccompile.so

categories=()
if [ "$self_test" = 1 ]; then
	categories=(variables/MAKEFLAGS options/warn-undefined-variables features/load)
	say "self-test: the loaded run also warns in every make; the comparison must fail"
fi

# run NAME: the suite (the categories given, or all) through S/bin/make;
# the driver's report in S/NAME.out, its work files in S/NAME.
run() {
	local t0=$SECONDS
	rm -rf "$S/tests"
	cp -r "$src/tests" "$S/tests"
	(cd "$S/tests" && perl ./run_make_tests.pl -srcdir "$src" -make "$S/bin/make" \
		"${categories[@]}" >"$S/$1.out" 2>&1) </dev/null || true
	rm -rf "${S:?}/$1"
	mv "$S/tests/work" "$S/$1"
	say "$1 run: $((SECONDS - t0)) s: $(grep -v "^\s*$" "$S/$1.out" | tail -n 1)"
}

# wrapper [ARG]: S/bin/make loads S/lib/asynccompile.so (and takes ARG)
wrapper() {
	rm -f "$S/bin/make"
	{
		echo '#!/bin/bash'
		printf 'exec -a "$0" %q %q %s "$@"\n' "$src/make" "--eval=load $loaded" "${1:-}"
	} >"$S/bin/make"
	chmod +x "$S/bin/make"
}

ln -s "$src/make" "$S/bin/make"
run plain

if [ "$self_test" = 1 ]; then
	wrapper "$(printf %q '--eval=$(warning asynccompile self-test)')"
else
	wrapper
fi
run loaded

rc=0
perl "$top/t/make-suite-compare.pl" filtered "$S" plain loaded "$loaded" || rc=1
if [ "$rc" = 1 ]; then
	mapfile -t residue <"$S/residue"
	say "differences left in ${#residue[@]} categories (${residue[*]}): running them with an inert object"
	printf '%s\n' 'int plugin_is_GPL_compatible;' \
		'int asynccompile_gmk_setup(const void *floc);' \
		'int asynccompile_gmk_setup(const void *floc) { (void)floc; return 1; }' >"$S/inert.c"
	cc -shared -fPIC -o "$loaded" "$S/inert.c"
	wrapper
	categories=("${residue[@]}")
	run inert
	if perl "$top/t/make-suite-compare.pl" exact "$S" loaded inert "${residue[@]}"; then
		rc=0
		say "what differs is what make does with any object it loads (asynccompile(7), \"WHAT LOADING THE PLUGIN ADDS\")"
	fi
fi

if [ "$self_test" = 1 ]; then
	if [ "$rc" = 1 ]; then
		say "self-test passed: the deliberate change was caught"
		exit 0
	fi
	say "self-test FAILED: a deliberate change went unnoticed"
	exit 1
fi
[ "$rc" = 0 ] && say "loading the plugin changes nothing but the documented traces"
exit "$rc"
