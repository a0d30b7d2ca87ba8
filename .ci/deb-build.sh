#!/bin/bash
# .ci/deb-build.sh [DIR] - build the Debian package the way a clean clone
# builds it, and lint it.
#
# Copies the files git knows (as they are in the work tree, so CI's clone
# gives exactly the submitted tree, and nothing built or ignored comes
# along) into DIR/asynccompile (default build/deb), runs
# `dpkg-buildpackage -us -uc -b` there, then lintian on the .deb, which
# must report no error.  Leaves DIR/asynccompile_VERSION_ARCH.deb and
# prints its path on the last line.  Needs the Build-Depends of
# debian/control (dpkg-checkbuilddeps names what is missing) and lintian.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/deb}
rm -rf "$dir"
mkdir -p "$dir/asynccompile"
dir=$(cd "$dir" && pwd)

git ls-files -z --cached --others --exclude-standard |
	tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$dir/asynccompile"

if ! (cd "$dir/asynccompile" && dpkg-buildpackage -us -uc -b) >"$dir/build.log" 2>&1; then
	tail -n 60 "$dir/build.log"
	echo "deb-build: dpkg-buildpackage failed (whole log: $dir/build.log)" >&2
	exit 1
fi
debs=("$dir"/asynccompile_*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || { echo "deb-build: no single asynccompile_*.deb in $dir" >&2; exit 1; }
deb=${debs[0]}
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Recommends\):/    &/p'
dpkg-deb --contents "$deb" | awk '{ print "    " $NF }'

# Every tag is printed, notes too (--pedantic --display-info); an error
# fails the build.
lintian_rc=0
lintian --fail-on error --display-info --pedantic "$deb" >"$dir/lintian.log" 2>&1 || lintian_rc=$?
echo "lintian $(lintian --version | awk '{ print $2 }'), exit $lintian_rc:"
grep -v '^running with root privileges' "$dir/lintian.log" | sed 's/^/    /' || echo "    (no tags)"
[ "$lintian_rc" -eq 0 ] || { echo "deb-build: lintian reports an error" >&2; exit 1; }
echo "$deb"
