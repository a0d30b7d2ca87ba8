#!/bin/sh
# A real out-of-tree module built through asynccompile-kbuild.mk against
# Debian's kernel headers (linux-headers-amd64, which .ci/run installs),
# as DKMS builds one: `make -C /usr/src/linux-headers-VER M=DIR modules`.
# Every .cmd file (the full command line of each step) and everything make
# prints must be what a stock build gives; the no-op rebuild after it is
# answered from the cache.
. "$(dirname "$0")/lib.sh"

HEADERS=
for d in /usr/src/linux-headers-*-amd64; do
	[ -f "$d/Makefile" ] && HEADERS=$d
done
[ -n "$HEADERS" ] || skip_all "no /usr/src/linux-headers-*-amd64 (apt-get install linux-headers-amd64)"

kbuild_fixture stock hello
mkdir frag
cp stock/hello.c stock/Kbuild frag/

module() { # DIR: make it as DKMS does; output with DIR's name as X
	run_make -j2 -C "$HEADERS" M="$TRASH/$1" modules
	sed -i "s|$TRASH/$1|X|g" out err
}

TEST_MAKE_TIMEOUT=300 module stock
[ "$make_status" -eq 0 ] || skip_all "the stock module does not build here: $(tail -n 3 err | tr '\n' ' ')"
mv out stock.out; mv err stock.err

MAKEFILES=$FRAG/asynccompile-kbuild.mk TEST_MAKE_TIMEOUT=300 module frag
ok "through the fragment: make succeeds" expect_make_ok
ok "through the fragment: the same output" expect_eq "$(cat stock.out)" "$(cat out)" "stdout"
ok "through the fragment: the same messages, no warning" expect_eq "$(cat stock.err)" "$(cat err)" "stderr"
ok "the module is built" test -s frag/hello.ko
cmds() { (cd "$1" && for f in .*.cmd; do printf '== %s\n' "$f"; sed "s|$TRASH/$1|X|g" "$f"; done); }
ok "every .cmd file is byte-identical to stock" expect_eq "$(cmds stock)" "$(cmds frag)" ".cmd files"
ok "there are .cmd files to compare" expect_eq 6 "$(ls -a frag | grep -c '\.cmd$')" ".cmd files"
entries() { ls "$XDG_CACHE_HOME/asynccompile/cache" 2>/dev/null | wc -l; }
before=$(entries)
ok "the probes' answers are cached (the cache is on through the fragment)" test "$before" -ge 20

MAKEFILES=$FRAG/asynccompile-kbuild.mk TEST_MAKE_TIMEOUT=300 module frag
ok "no-op rebuild: make succeeds" expect_make_ok
ok "no-op rebuild: no new answer had to be kept" expect_eq "$before" "$(entries)" "cache entries"
ok "no-op rebuild: no scratch directory is left" expect_eq "" "$(ls -a frag | grep '^\.tmp_')"
ok "no-op rebuild: the .cmd files are unchanged" expect_eq "$(cmds stock)" "$(cmds frag)" ".cmd files"

done_testing
