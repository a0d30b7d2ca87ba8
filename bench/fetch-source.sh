#!/bin/sh
# bench/fetch-source.sh - download and unpack a Debian source package for
# the host's own release into a directory, with a private apt
# configuration, so the benchmarks can use real third-party code without
# it ever being committed.
#
#   sh bench/fetch-source.sh PKG DESTDIR
#
# On success DESTDIR/tree is the unpacked source (Debian patches applied)
# and the script prints that path as its last line of stdout.  A second
# run reuses DESTDIR/tree.
#
# apt runs with its own source list, package lists and cache under
# DESTDIR/../apt; the machine's apt state is never touched.  When the host
# has no deb-src entry for its release, one is derived from its deb entry
# (same URI, same Signed-By), the way .ci/build-make44.sh derives trixie's,
# so whatever mirror or proxy the host uses is used and no host name is
# written down here.  Messages go to stderr; exit status 1 on any failure.
set -eu

pkg=${1:?usage: fetch-source.sh PKG DESTDIR}
dest=${2:?usage: fetch-source.sh PKG DESTDIR}

say() { printf 'fetch-source: %s: %s\n' "$pkg" "$*" >&2; }
die() { say "error: $*"; exit 1; }

if [ -f "$dest/tree/.fetched" ]; then
	say "cached: $dest/tree"
	echo "$dest/tree"
	exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get not found"
command -v dpkg-source >/dev/null 2>&1 || die "dpkg-source not found (apt-get install dpkg-dev)"

# shellcheck disable=SC1091
suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || suite=bookworm

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

# shellcheck source=../.ci/apt-private.sh
. "$(cd "$(dirname "$0")/.." && pwd)/.ci/apt-private.sh"
apt_private_setup "$(dirname "$dest")/apt" "$suite" "$suite" ||
	die "no apt entry for suite $suite in /etc/apt to derive a deb-src entry from"

# One update serves every package fetched into the same parent directory.
if [ ! -f "$apt_dir/.updated" ]; then
	apt_private update >"$apt_dir/update.log" 2>&1 ||
		{ sed 's/^/    /' "$apt_dir/update.log" >&2; die "apt-get update failed"; }
	: >"$apt_dir/.updated"
fi

download() {
	rm -rf "$dest/dl" "$dest/tree"
	mkdir -p "$dest/dl"
	(cd "$dest/dl" && apt_private source --download-only "$pkg") >"$dest/fetch.log" 2>&1
}
# Lists kept from an earlier run may name a version the mirror has since
# dropped: refresh them once before giving up.
if ! download; then
	if ! { apt_private update >"$apt_dir/update.log" 2>&1 && download; }; then
		sed 's/^/    /' "$dest/fetch.log" >&2
		die "apt-get source --download-only failed"
	fi
fi
dsc=$(find "$dest/dl" -maxdepth 1 -name "${pkg}_*.dsc" | head -n1)
[ -n "$dsc" ] || die "apt-get source left no .dsc in $dest/dl"
(cd "$dest" && dpkg-source -x "$dsc" tree) >"$dest/unpack.log" 2>&1 </dev/null ||
	{ sed 's/^/    /' "$dest/unpack.log" >&2; die "dpkg-source -x failed"; }
basename "$dsc" >"$dest/tree/.fetched"
say "unpacked $(basename "$dsc") into $dest/tree"
echo "$dest/tree"
