#!/bin/sh
# One table of identities for the load pass (lib/readset.h, struct
# rs_table): the record's and the cache's read sets, checked at load, stat
# each path they share once.  What the load pass lets through is checked
# again, path by path, when a call takes it: a file changed between two
# reuses in one make, by a plain $(shell) or by a recipe, makes the second
# call's answer $(shell)'s.
. "$(dirname "$0")/lib.sh"

stat_of() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" out | tail -n1; }
write_config "cache: true"

# A and B read in.txt, R reads rin.txt.  Once ./trigger exists, a plain
# $(shell) rewrites in.txt between the calls A and B, and the recipe of
# t1 rewrites rin.txt before t2's recipe asks for R's command again.  The
# trigger is no input of any async-shell command, so the record and the
# cache stand for the run that has it.
printf 'orig\n' >in.txt
printf 'orig\n' >rin.txt
settle
write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell cat in.txt)
R := $(async-shell cat rin.txt; echo r)
W := $(shell [ ! -f trigger ] || echo changed-by-shell >in.txt)
B := $(async-shell cat in.txt; echo b)
$(info parse: $(A) | $(R) | $(B) | $(shell cat in.txt; echo b))
all: t2 ; @echo $(async-stats)
t1: ; @[ ! -f trigger ] || echo changed-by-recipe >rin.txt
t2: t1 ; @echo "recipe: $(async-shell cat rin.txt; echo r) | $(shell cat rin.txt; echo r)"
.PHONY: all t1 t2
EOF2

run_make
ok "first run: make succeeds" expect_make_ok
ok "first run: the answers" expect_grep '^parse: orig | orig r | orig b | orig b$' out
run_make
ok "second run: make succeeds" expect_make_ok
ok "second run: every answer from the cache" \
	expect_eq "3 0" "$(stat_of cache_hits) $(stat_of spec_misses)" "cache_hits spec_misses"
ok "second run: the load pass stat'ed shared paths once" \
	sh -c 'test "$1" -gt 0 || { echo "paths_reused=$1"; cat out; exit 1; }' sh "$(stat_of paths_reused)"

: >trigger
run_make
ok "a \$(shell) and a recipe write: make succeeds" expect_make_ok
ok "A, before the \$(shell) wrote: from the cache" expect_grep '^parse: orig | ' out
ok "B, after the \$(shell) wrote in.txt: \$(shell)'s answer" \
	expect_grep '^parse: orig | orig r | changed-by-shell b | changed-by-shell b$' out
ok "R's command in a recipe after t1 wrote rin.txt: \$(shell)'s answer" \
	expect_grep '^recipe: changed-by-recipe r | changed-by-recipe r$' out

done_testing
