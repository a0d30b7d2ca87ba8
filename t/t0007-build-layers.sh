#!/bin/sh
# The folders' layering (README, "Development"; each folder's README):
# lib/, linked by every process, includes only lib/; answer/, the answer
# cache, includes only itself and lib/, and none of it is left in lib/;
# includes name their folder, never ../; every folder of C code has a
# README and the top-level README's map names it.
. "$(dirname "$0")/lib.sh"

cd "$TEST_ROOT" || exit 1

# The includes of folder $1's sources that name a folder other than the
# ones allowed ($2...): "file:line: folder/header".
includes_outside() { # folder allowed...
	tl_dir=$1; shift
	grep -HnoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/[^"]*"' \
		"$tl_dir"/*.c "$tl_dir"/*.h 2>/dev/null |
		sed -E 's/#[[:space:]]*include[[:space:]]*"([^"]*)"/\1/' |
		awk -F: -v allowed=" $* " '{ split($3, p, "/");
			if (index(allowed, " " p[1] " ") == 0) print }'
}
ok "lib/ includes only lib/ headers" \
	expect_eq "" "$(includes_outside lib lib)" "includes outside lib/"
ok "answer/ includes only answer/ and lib/ headers" \
	expect_eq "" "$(includes_outside answer answer lib)" "includes outside answer/ and lib/"

# The answer cache's files, by what they are: in answer/, none in lib/.
in_lib() {
	for f in cache record cmdid stats readset_check readset_table; do
		ls lib/$f.c lib/$f.h 2>/dev/null
	done
}
ok "the answer cache is in answer/, not in lib/" \
	expect_eq "answer/cache.h answer/readset_check.h " \
	"$(ls answer/cache.h answer/readset_check.h 2>/dev/null | tr '\n' ' ')$(in_lib | tr '\n' ' ')" \
	"answer cache files"

# No include climbs out of its folder.
up() {
	grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' \
		--include='*.c' --include='*.h' lib answer pool worker config cli plugin trace \
		fuzz t/unit t/helpers 2>/dev/null
}
ok "no include names ../" expect_eq "" "$(up)" "includes through ../"

# Every top-level folder with C sources (but the tests and fuzz targets)
# has a README, and the top-level README's map of folders names it.
folders() {
	for d in */; do
		d=${d%/}
		case $d in t|fuzz|build|bench|examples|debian|doc|man) continue ;; esac
		ls "$d"/*.c >/dev/null 2>&1 && echo "$d"
	done
}
map_line() { grep -E '^    lib/ .* README$' README; }
missing() {
	for d in $(folders); do
		[ -f "$d/README" ] || echo "$d: no README"
		map_line | grep -qF " $d/ " || map_line | grep -qE "^    $d/ " ||
			echo "$d: not in README's map"
	done
}
ok "README's map names answer/" expect_grep '^    lib/ answer/ ' README
ok "every folder of C code has a README and is on README's map" \
	expect_eq "" "$(missing)" "folders"

done_testing
