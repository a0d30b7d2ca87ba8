#!/bin/bash
# .ci/build-make44.sh - build GNU make 4.4.1 into build/make-4.4.1/make so
# the suite can run against a second make (the Makefile picks up exactly
# that path).  Debian bookworm ships 4.3; the 4.4.1 sources come from
# trixie's make-dfsg source package.
#
# apt runs with a private configuration under build/apt: its own source
# list, package lists and cache, so the machine's apt state is never
# touched.  The deb-src entry is the machine's own entry for its release
# with the suite changed to trixie, so whatever mirror or proxy the host
# is set up for is used and no host name is written down here.
#
# The built source tree is kept in build/make-4.4.1/src: its tests/
# directory is make's own test suite, which t/make-suite-compare.sh runs
# with and without the plugin loaded.  A second run is a no-op when the
# binary is already there and says 4.4.1 and the tree is there too.
# Needs: apt, dpkg-dev (dpkg-source), a C compiler, make.  Runs without a
# terminal or stdin.
set -euo pipefail

want=4.4.1
src_pkg=make-dfsg
new_suite=trixie

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/make-$want
apt_dir=$top/build/apt
work=$top/build/make-$want-src

say() { printf 'build-make44: %s\n' "$*"; }
die() { printf 'build-make44: error: %s\n' "$*" >&2; exit 1; }

is_wanted_make() { # path
	[ -x "$1" ] || return 1
	"$1" --version 2>/dev/null </dev/null | head -n1 | grep -qx "GNU Make $want"
}

if is_wanted_make "$out/make" && [ -f "$out/src/tests/run_make_tests.pl" ] &&
	is_wanted_make "$out/src/make"; then
	say "cached: $out/make is GNU Make $want, its built tree is $out/src"
	exit 0
fi

command -v apt-get >/dev/null || die "apt-get not found"
command -v dpkg-source >/dev/null || die "dpkg-source not found (apt-get install dpkg-dev)"
command -v cc >/dev/null || command -v gcc >/dev/null || die "no C compiler"

# shellcheck disable=SC1091
host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$host_suite" ] || host_suite=bookworm

# --- a private apt configuration with trixie's deb-src entry --------------

# shellcheck source=.ci/apt-private.sh
. "$top/.ci/apt-private.sh"
apt_private_setup "$apt_dir" "$host_suite" "$new_suite" ||
	die "no apt entry for suite $host_suite in /etc/apt to derive a $new_suite deb-src entry from"
say "private apt source ($new_suite, derived from the host's $host_suite entry):"
sed 's/^/    /' "$parts"/*

# --- fetch the source package with the private apt configuration --------

t0=$SECONDS
apt_private update
rm -rf "$work"
mkdir -p "$work"
(cd "$work" && apt_private source --download-only "$src_pkg")
dsc=$(find "$work" -maxdepth 1 -name "${src_pkg}_*.dsc" | head -n1)
[ -n "$dsc" ] || die "apt-get source left no .dsc in $work"
say "downloaded $(basename "$dsc") in $((SECONDS - t0))s"

# --- unpack, patch in the stripped doc/ bits, build ----------------------

# Debian's patches edit configure.ac and Makefile.am without regenerating
# configure and Makefile.in, so applying them would make the build rerun
# automake, and their configure.ac half would not take effect anyway.
# Build the pristine upstream 4.4.1 release instead (minus doc/, which
# Debian strips).
(cd "$work" && dpkg-source --skip-patches -x "$dsc" tree) </dev/null
tree=$work/tree

# Debian strips doc/ (non-free docs); configure still generates
# doc/Makefile and the top-level Makefile wants doc/make.1.
mkdir -p "$tree/doc"
if [ ! -f "$tree/doc/Makefile.in" ]; then
	cat >"$tree/doc/Makefile.in" <<'EOF'
# Stub: the documentation is not part of the Debian source package.
all install uninstall clean distclean mostlyclean maintainer-clean check installcheck:
	@:
.DEFAULT:
	@:
EOF
fi
[ -f "$tree/doc/make.1" ] || : >"$tree/doc/make.1"

t0=$SECONDS
(
	cd "$tree"
	./configure --disable-nls --quiet
	make -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; exit 1; }
) </dev/null
is_wanted_make "$tree/make" || die "built $tree/make is not GNU Make $want: $("$tree/make" --version | head -n1)"

# The suite loads a plugin, so the build must support `load`.
# shellcheck disable=SC2016
printf '$(info $(.FEATURES))\nall:;@:\n' >"$work/features.mk"
features=$("$tree/make" -f "$work/features.mk" </dev/null)
case " $features " in
*" load "*) ;;
*) die "built make lacks the load feature: $features" ;;
esac
say "built in $((SECONDS - t0))s; features: $features"

mkdir -p "$out"
cp "$tree/make" "$out/make.tmp"
mv -f "$out/make.tmp" "$out/make"
# The built tree stays (make's test suite runs from it); the download,
# the unpacked Debian packaging and apt's state go.
rm -rf "$out/src"
mv "$tree" "$out/src"
rm -rf "$work" "$apt_dir"
say "installed $out/make ($("$out/make" --version | head -n1)) and its tree $out/src"
