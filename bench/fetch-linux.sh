#!/bin/sh
# bench/fetch-linux.sh - download Debian's linux-source-VERSION package and
# unpack the kernel tree it carries, so workload 5 of `make bench` can use
# a real Kbuild tree without it ever being committed.
#
#   sh bench/fetch-linux.sh VERSION DESTDIR      (e.g. 6.12 bench/out/src/linux)
#
# linux-source-X.Y is a binary package (bookworm has 6.12 in
# bookworm-security) holding one tarball, /usr/src/linux-source-X.Y.tar.xz;
# fetch-source.sh's `apt-get source` does not apply.  `apt-get download`
# uses the host's package lists and writes only into DESTDIR (it installs
# nothing and changes no apt state).  On success DESTDIR/tree is the
# unpacked tree and the script prints that path as its last line of
# stdout.  A second run reuses DESTDIR/tree (about 1.7 GB; the 150 MB .deb
# is deleted once unpacked).  Messages go to stderr; exit status 1 on any
# failure.
set -eu

ver=${1:?usage: fetch-linux.sh VERSION DESTDIR}
dest=${2:?usage: fetch-linux.sh VERSION DESTDIR}
pkg=linux-source-$ver

say() { printf 'fetch-linux: %s: %s\n' "$pkg" "$*" >&2; }
die() { say "error: $*"; exit 1; }

if [ -f "$dest/tree/.fetched" ]; then
	say "cached: $dest/tree"
	echo "$dest/tree"
	exit 0
fi

for t in apt-get dpkg-deb tar xz; do
	command -v "$t" >/dev/null 2>&1 || die "$t not found"
done

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
rm -rf "$dest/dl" "$dest/tree" "$dest/unpack"
mkdir -p "$dest/dl" "$dest/unpack"

# The sandbox user (_apt) cannot write into a root-owned bench/out.
(cd "$dest/dl" && apt-get -q -o APT::Sandbox::User=root download "$pkg") \
	>"$dest/fetch.log" 2>&1 </dev/null || {
	sed 's/^/    /' "$dest/fetch.log" >&2
	die "apt-get download failed (is $pkg in the host's apt sources, e.g. bookworm-security?)"
}
deb=$(find "$dest/dl" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)
[ -n "$deb" ] || die "apt-get download left no .deb in $dest/dl"

say "unpacking $(basename "$deb") (about 15 s)"
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" | tar -xJ -C "$dest/unpack" ||
	die "could not unpack /usr/src/$pkg.tar.xz from $(basename "$deb")"
[ -f "$dest/unpack/$pkg/Makefile" ] || die "the tarball has no $pkg/Makefile"
mv "$dest/unpack/$pkg" "$dest/tree"
rmdir "$dest/unpack"
basename "$deb" >"$dest/tree/.fetched"
rm -rf "$dest/dl"
say "unpacked into $dest/tree"
echo "$dest/tree"
