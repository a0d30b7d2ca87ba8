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
apt_dir=$(dirname "$dest")/apt
parts=$apt_dir/sources.list.d

# deb822: the first enabled paragraph listing exactly $suite, as deb-src.
# Signed-By is kept verbatim, including an inline key block.
from_deb822() { # file
	awk -v suite="$suite" '
	function flush(   n, i, w, hit, u) {
		if (!nf) return
		hit = 0
		n = split(f["suites"], w, /[ \t]+/)
		for (i = 1; i <= n; i++) if (w[i] == suite) hit = 1
		if (tolower(f["enabled"]) == "no") hit = 0
		split(f["uris"], u, /[ \t]+/)
		if (hit && u[1] != "" && !done) {
			print "Types: deb-src"
			print "URIs: " u[1]
			print "Suites: " suite
			print "Components: main"
			if (signed != "") print "Signed-By:" signed
			done = 1
		}
		delete f; signed = ""; insigned = 0; nf = 0
	}
	/^[ \t]*#/ { next }
	/^[ \t]*$/ { flush(); next }
	/^[ \t]/ { if (insigned) signed = signed "\n" $0; next }
	{
		nf++
		key = tolower(substr($0, 1, index($0, ":") - 1))
		val = substr($0, index($0, ":") + 1)
		insigned = (key == "signed-by")
		if (insigned) signed = val
		sub(/^[ \t]+/, "", val); sub(/[ \t]+$/, "", val)
		f[key] = val
	}
	END { flush() }' "$1"
}

# One-line format: "deb [opts] URI SUITE COMPONENTS...".
from_list() { # file
	awk -v suite="$suite" '
	/^[ \t]*#/ || NF < 3 { next }
	$1 != "deb" && $1 != "deb-src" { next }
	{
		i = 2; opts = ""
		if ($2 ~ /^\[/) {
			while (i <= NF) { opts = opts " " $i; if ($i ~ /\]$/) break; i++ }
			i++
		}
		if ($(i + 1) != suite) next
		gsub(/^ \[|\]$/, "", opts)
		print "deb-src" (opts == "" ? "" : " [" opts "]") " " $i " " suite " main"
		exit
	}' "$1"
}

rm -rf "$parts"
mkdir -p "$parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
entry=
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	entry=$(from_deb822 "$f")
	if [ -n "$entry" ]; then
		printf '%s\n' "$entry" >"$parts/$suite-src.sources"
		break
	fi
done
if [ -z "$entry" ]; then
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		entry=$(from_list "$f")
		if [ -n "$entry" ]; then
			printf '%s\n' "$entry" >"$parts/$suite-src.list"
			break
		fi
	done
fi
[ -n "$entry" ] || die "no apt entry for suite $suite in /etc/apt to derive a deb-src entry from"

apt_private() {
	DEBIAN_FRONTEND=noninteractive apt-get -q -y \
		-o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$parts" \
		-o Dir::State::Lists="$apt_dir/lists" \
		-o Dir::Cache="$apt_dir/cache" \
		-o Acquire::Languages=none \
		-o APT::Sandbox::User=root \
		"$@" </dev/null
}

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
