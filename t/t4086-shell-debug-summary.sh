#!/bin/sh
# ASYNC_COMPILE_DEBUG: at 1 each make ends with one summary line for
# async-shell (how its calls were answered, and why the misses, counted
# by kind); at 2 also a line for each event as it happens.
. "$(dirname "$0")/lib.sh"

write_config "cache: false"
write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell cat a.txt)
B := $(async-shell cat b.txt)
C := $(async-shell cat c.txt)
D := $(async-shell cat a.txt)
all: ; @echo $A $B $C $D
EOF2
# inputs written just before a run make it impure (racy), and its memo
# is then not kept: every write here is followed by settle
echo 1 >a.txt; echo 2 >b.txt; echo 3 >c.txt
settle
summary() { grep '^asynccompile: async-shell: [0-9]* calls\{0,1\}: ' err; }
one_summary() { # expected counts, then the rest of the line
	[ "$(grep -c '^asynccompile:' err)" -eq 1 ] && summary | grep -qx "asynccompile: async-shell: $1" ||
		{ cat err; exit 1; }
}

ASYNC_COMPILE_DEBUG=1 run_make
ok "a first run: make succeeds" sh -c '[ "$0" -eq 0 ] && grep -qx "1 2 3 1" out' "$make_status"
ok "... one summary line: three run, one from the memo, why nothing was speculated" one_summary \
	'4 calls: 0 from the cache, 0 by speculation, 1 from the memo, 3 run; misses: 1 no store (.*)'
ASYNC_COMPILE_DEBUG=1 run_make
ok "a second run: all three by speculation, no misses" one_summary \
	'4 calls: 0 from the cache, 3 by speculation, 1 from the memo, 0 run (3 speculated, 0 unused); no misses'

# three files change: three misses of one kind, counted once
echo 11 >a.txt; echo 22 >b.txt; echo 33 >c.txt
settle
ASYNC_COMPILE_DEBUG=1 run_make
ok "inputs changed: make gives the new answers" grep -qx "11 22 33 11" out
ok "... and one line counts the three misses as one kind" one_summary \
	'4 calls: 0 from the cache, 0 by speculation, 1 from the memo, 3 run; misses: 3 not run ahead of need (a path changed)'

echo 111 >a.txt
settle
ASYNC_COMPILE_DEBUG=2 run_make
ok "ASYNC_COMPILE_DEBUG=2: a line for the event, naming the path" \
	expect_grep "^asynccompile: async-shell: not run ahead of need: a path changed: .*a\\.txt" err
ok "... and the summary line too" sh -c '[ "$(grep -c "^asynccompile: async-shell: [0-9]* calls" err)" -eq 1 ]'
ok "... which counts the event" expect_grep '; misses: 1 not run ahead of need (a path changed)$' err

run_make
ok "without ASYNC_COMPILE_DEBUG: nothing is said" \
	sh -c '[ "$0" -eq 0 ] && ! grep -q asynccompile err' "$make_status"

# the cache answers: counted apart from speculation (inputs read once
# since written, as t4080's compilers, so the answers are kept; the
# command sees ASYNC_COMPILE_DEBUG, so both runs have the same)
write_config "cache: true"
cat a.txt b.txt c.txt >/dev/null
settle
ASYNC_COMPILE_SPECULATE=0 ASYNC_COMPILE_DEBUG=1 run_make
ASYNC_COMPILE_SPECULATE=0 ASYNC_COMPILE_DEBUG=1 run_make
ok "answers from the cache are counted as such" one_summary \
	'4 calls: 3 from the cache, 0 by speculation, 1 from the memo, 0 run; no misses'
# the same answers found in the cache at load, for speculation, and
# taken at the calls: counted too (they were not: no line was printed).
# Answers are kept per environment, and the runs above had
# ASYNC_COMPILE_SPECULATE=0 in theirs: the first run keeps them for this one.
ASYNC_COMPILE_DEBUG=1 run_make
ASYNC_COMPILE_DEBUG=1 run_make
ok "cached answers taken at load are counted as from the cache" one_summary \
	'4 calls: 3 from the cache, 0 by speculation, 1 from the memo, 0 run; no misses'
# a probe's cache lookups ($(async-try)'s) are not async-shell's: one
# that misses on every run stays out of this line
write_mk try.mk <<'EOF2'
load @PLUGIN@
A := $(async-shell cat a.txt)
B := $(async-shell cat b.txt)
C := $(async-shell cat c.txt)
D := $(async-shell cat a.txt)
$(async-try t,echo probe $(file <n.txt))
all: ; @echo $A $B $C $D $(async-wait)$(t.out)
EOF2
echo 1 >n.txt
ASYNC_COMPILE_DEBUG=1 run_make -f try.mk
echo 2 >n.txt
ASYNC_COMPILE_DEBUG=1 run_make -f try.mk
ok "with a probe: make gives the answers" \
	sh -c '[ "$0" -eq 0 ] && grep -qx "111 22 33 111 probe 2" out || { cat out; exit 1; }' "$make_status"
ok "... and its cache miss is not counted as async-shell's" one_summary \
	'4 calls: 3 from the cache, 0 by speculation, 1 from the memo, 0 run; no misses'
# a variable new to the environment misses every cache entry (answers
# are kept per environment) and speculation answers: the line says so
ASYNC_COMPILE_DEBUG=1 run_make T4086_NEW=1
ASYNC_COMPILE_DEBUG=1 T4086_NEWER=1 run_make
ok "a new variable: speculation answers, and the cache's misses are counted" one_summary \
	'4 calls: 0 from the cache, 3 by speculation, 1 from the memo, 0 run (3 speculated, 0 unused) (the cache missed 3 lookups); no misses'

# each make says its own: a sub-make too
write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell cat a.txt)
all: ; @+$(MAKE) -s -f sub.mk
EOF2
write_mk sub.mk <<'EOF2'
load @PLUGIN@
B := $(async-shell cat b.txt)
C := $(async-shell cat c.txt)
all: ; @:
EOF2
ASYNC_COMPILE_SPECULATE=0 ASYNC_COMPILE_DEBUG=1 run_make
ok "a recursive build: make succeeds" expect_make_ok
ok "... each make ends with its own summary" \
	sh -c 'grep -q "^asynccompile: async-shell: 1 call: " err && grep -q "^asynccompile: async-shell: 2 calls: " err &&
		[ "$(grep -c "^asynccompile:" err)" -eq 2 ]'

done_testing
