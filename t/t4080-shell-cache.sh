#!/bin/sh
# The answer cache (config cache: true): answers of async-shell and
# async-try kept between runs, keyed on the programs the command names,
# and the store's guards.
. "$(dirname "$0")/lib.sh"

store=$XDG_CACHE_HOME/asynccompile
ASYNC_COMPILE_WORKER_UT=${ASYNC_COMPILE_WORKER:-$TEST_ROOT/worker/asynccompile-worker}
case $ASYNC_COMPILE_WORKER_UT in /*) ;; *) ASYNC_COMPILE_WORKER_UT=$TEST_CWD/$ASYNC_COMPILE_WORKER_UT ;; esac
stat_of() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" out | tail -n1; }
hits_misses() { expect_eq "$1" "$(stat_of cache_hits) $(stat_of cache_misses)" "cache_hits cache_misses"; }
cfg() { # extra YAML lines
	{
		[ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"
		echo "cache: true"
		echo "speculate: false"
		for l; do echo "$l"; done
	} >"$TRASH/cache.yaml"
	ASYNC_COMPILE_CONFIG=$TRASH/cache.yaml
	export ASYNC_COMPILE_CONFIG
}
cfg

# fake compilers: "accepting" takes -fprobe, "rejecting" does not.  They
# write nothing (a command that writes is never cached): whether one ran
# shows in $(async-stats), spec_misses counting the commands run.
mkdir -p bin bin2
# A compiler read once since it was written, as an installed one has
# been: the first read moves the access time (relatime), which the
# shell's PATH search saw (stat), so without it the second run's
# async-shell answer would be refused once (issue 29 item 6).
compiler() { # file verdict(0|1) [padding]
	printf '#!/bin/sh\nexit %s\n# %s\n' "$2" "${3:-}" >"$1"
	chmod +x "$1"
	cat "$1" >/dev/null
	settle
}
compiler bin/fcc 0
write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell fcc -fprobe >/dev/null 2>&1 && echo accepted || echo rejected)
$(async-try T,fcc -fprobe)
$(async-wait T)
$(info answers: $(A) $(T.status))
all: ; @echo $(async-stats)
EOF2
export PATH="$TRASH/bin:$PATH"

run_make
ok "first run: make succeeds" expect_make_ok
ok "first run: accepted" expect_grep '^answers: accepted 0$' out
ok "first run: two misses" hits_misses "0 2"
run_make
ok "second run: accepted, from the cache" expect_grep '^answers: accepted 0$' out
ok "second run: two hits" hits_misses "2 0"
ok "second run: the compiler never ran" \
	expect_eq "0 0" "$(stat_of spec_misses) $(stat_of completed)" "spec_misses completed"

# GNU grep reads its own /proc/self/maps at start (gnulib's stack
# overflow handler): a process's own /proc entries are not inputs, so a
# probe that runs grep is kept; what grep reads still is an input.
echo 'CONFIG_X=y' >grep.in
settle
write_mk grep.mk <<'EOF2'
load @PLUGIN@
G := $(async-shell grep -c '=y$$' grep.in)
S := $(shell grep -c '=y$$' grep.in)
$(info grep: $(G) $(S))
all: ; @echo $(async-stats)
EOF2
run_make -f grep.mk
ok "a grep probe, first run: \$(shell)'s answer" expect_grep '^grep: 1 1$' out
run_make -f grep.mk
ok "a grep probe, second run: from the cache" hits_misses "1 0"
ok "... \$(shell)'s answer" expect_grep '^grep: 1 1$' out
echo 'CONFIG_Y=y' >>grep.in
settle
run_make -f grep.mk
ok "the file grep read changed: a miss, \$(shell)'s answer" \
	sh -c 'grep -q "^grep: 2 2$" out && grep -q " cache_hits=0 cache_misses=1 " out || { cat out; exit 1; }'

# Two environments in turn (two terminals, make and env make): an answer
# is kept for each, and each is used only under its own environment.
for v in one two one two; do
	export TERMINAL=$v
	run_make -f grep.mk
	cp out out.$v.last
done
unset TERMINAL
ok "two environments in turn: the second round hits for both" \
	sh -c 'grep -q " cache_hits=1 cache_misses=0 " out.one.last && grep -q " cache_hits=1 cache_misses=0 " out.two.last || { cat out.one.last out.two.last; exit 1; }'

# a new compiler (new size and mtime) that rejects the flag
compiler bin/fcc 1 "a new version"
run_make
ok "replaced compiler: the new answer" expect_grep '^answers: rejected 1$' out
ok "replaced compiler: misses" hits_misses "0 2"

# cache_check: content sees a change that keeps size and mtime
cfg "cache_check: content"
compiler bin/fcc 0 same-size-1
touch -d '2020-01-01 00:00:00' bin/fcc
settle
run_make
ok "content: accepted" expect_grep '^answers: accepted 0$' out
compiler bin/fcc 1 same-size-1
touch -d '2020-01-01 00:00:00' bin/fcc
settle
run_make
ok "content: only the bytes changed: the new answer" expect_grep '^answers: rejected 1$' out
cfg
compiler bin/fcc 0 same-size-2
touch -d '2020-01-01 00:00:00' bin/fcc
settle
run_make
compiler bin/fcc 1 same-size-2
touch -d '2020-01-01 00:00:00' bin/fcc
settle
run_make
ok "mtime (the default) with size and mtime kept: the read set sees the change (ctime)" \
	expect_grep '^answers: rejected 1$' out

# another fcc earlier in PATH
compiler bin/fcc 0
run_make
compiler bin2/fcc 1
PATH="$TRASH/bin2:$PATH" run_make
ok "PATH puts another fcc first: its answer" expect_grep '^answers: rejected 1$' out
ok "PATH puts another fcc first: misses" hits_misses "0 2"

# damaged entries are misses, never answers
run_make
for f in "$store"/cache/c-*; do flip_byte "$f" 30; done
run_make
ok "damaged entries: the right answers" expect_grep '^answers: accepted 0$' out
ok "damaged entries: misses" hits_misses "0 2"

# age: an entry older than cache_max_age is a miss
run_make
ok "fresh entries hit" hits_misses "2 0"
for f in "$store"/cache/c-*; do "$TEST_HELPERDIR/cache-entry.py" "$f" 7200; done
cfg "cache_max_age: 3h"
run_make
ok "2-hour-old entries, max age 3h: hits" hits_misses "2 0"
for f in "$store"/cache/c-*; do "$TEST_HELPERDIR/cache-entry.py" "$f" 90000; done
cfg "cache_max_age: 1d"
run_make
ok "25-hour-old entries, max age 1d: misses" hits_misses "0 2"
ok "expired: the right answers" expect_grep '^answers: accepted 0$' out

# only answers of jobs that ran to completion; never build steps
cfg "timeout: 300ms"
write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell exec sleep 5)
S := $(.SHELLSTATUS)
all:
	@$(async-compile step,echo step >>runs)$(async-wait)
	@echo "$(S) $(async-stats)"
EOF2
rm -f runs
run_make
run_make
ok "a timed-out job is not kept: it ran again" \
	sh -c 'grep -q " cache_hits=0 cache_misses=1 spec_unproven=0 spec_rejected=0 memo_stale=0$" out || { cat out; exit 1; }'
ok "a build step is never kept: it ran again" expect_eq 2 "$(grep -c '^step' runs)" "build step runs"
ok "a timed-out job: status 124 each time" expect_grep '^124 ' out
cfg

# a write failure (an entry's name taken by a directory) loses nothing
write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell echo answer-$(N))
$(info answers: $(A))
all: ; @echo $(async-stats)
EOF2
rm -rf "$store/cache"
N=1 run_make
f=$(ls "$store"/cache/c-*)
rm -f "$f"; mkdir "$f"
N=1 run_make
ok "an entry that cannot be written: make succeeds" expect_make_ok
ok "an entry that cannot be written: the answer" expect_grep '^answers: answer-1$' out
ok "an entry that cannot be written: no temporary file left" \
	expect_eq "" "$(ls -a "$store/cache" | grep '^\.tmp')"
rmdir "$f"

# a store that others may write, or that another user owns, is ignored
N=2 run_make
chmod 777 "$store/cache"
N=2 run_make
ok "a world-writable cache directory: ignored" hits_misses "0 0"
ok "a world-writable cache directory: the answer" expect_grep '^answers: answer-2$' out
chmod 700 "$store/cache"
N=2 run_make
ok "mode restored: hits" hits_misses "1 0"

stage_as_nobody; why=$stage_why
if [ -z "$why" ]; then
	chown nobody "$store"
	N=2 run_make
	ok "a store another user owns: ignored" hits_misses "0 0"
	chown 0 "$store"
	# root with HOME=A, nobody with HOME=B: separate stores, side by
	# side in the stage, so nobody could reach A if it tried
	A=$STAGE/A B=$STAGE/B nb=$STAGE/nb
	mkdir -p "$A" "$B" "$nb" && chmod 755 "$A" && chown nobody "$B" && chmod 777 "$nb"
	stage_mk Makefile "$nb/Makefile"
	unset XDG_CACHE_HOME
	HOME=$A N=3 run_make
	# a PATH nobody can search whole: a PATH entry it may not look in
	# (root's ~/.pyenv/shims) makes the lookup, and the answer, opaque
	HOME=$B N=3 PATH=/usr/local/bin:/usr/bin:/bin run_make_as nobody "$nb"
	ok "nobody with HOME=B: the answer" expect_grep '^answers: answer-3$' out
	ok "nobody with HOME=B: its own store" test -d "$B/.cache/asynccompile/cache"
	ok "root with HOME=A: its own store" test -d "$A/.cache/asynccompile/cache"
	ok "nobody neither read nor wrote A" \
		sh -c '[ -z "$(find "$0" ! -user 0)" ] && [ -z "$(find "$1" -user 0)" ]' "$A" "$B"
	ok "nobody's own entry" \
		expect_eq 1 "$(ls "$B/.cache/asynccompile/cache" 2>/dev/null | grep -c '^c-')" "entries"
	# a read-only store: nobody's B, made read-only
	chmod 500 "$B/.cache/asynccompile/cache" 2>/dev/null
	HOME=$B N=4 run_make_as nobody "$nb"
	ok "a read-only store: the answer" expect_grep '^answers: answer-4$' out
	ok "a read-only store: silent" expect_eq "" "$(cat err)"
	XDG_CACHE_HOME=$TRASH/.cache; export XDG_CACHE_HOME
else
	for i in 1 2 3 4 5 6 7 8; do skip "ownership and per-user stores: $why"; done
fi

# two makes filling the cache at once
rm -rf "$store/cache"
write_mk Makefile <<'EOF2'
load @PLUGIN@
R := $(foreach i,1 2 3 4 5 6,$(async-shell echo r$i-$(N)))
$(info answers: $(R))
all: ; @echo $(async-stats)
EOF2
N=5 "$MAKE_UT" >out.1 2>err.1 &
p1=$!
N=5 "$MAKE_UT" >out.2 2>err.2 &
p2=$!
wait $p1; s1=$?; wait $p2; s2=$?
ok "two makes at once: both succeed" expect_eq "0 0" "$s1 $s2"
ok "two makes at once: both right" sh -c 'grep -q "^answers: r1-5 r2-5 r3-5 r4-5 r5-5 r6-5$" out.1 &&
	grep -q "^answers: r1-5 r2-5 r3-5 r4-5 r5-5 r6-5$" out.2'
N=5 run_make
ok "after two makes at once: every entry whole (six hits)" hits_misses "6 0"

# the worker shows and clears the cache (asynccompile -s and -C: t9060)
"$ASYNC_COMPILE_WORKER_UT" --cache-stats "$TRASH/cache.yaml" >stats 2>&1
ok "--cache-stats counts the entries" expect_grep '^cache  *entries=6 bytes=' stats
"$ASYNC_COMPILE_WORKER_UT" --cache-clear "$TRASH/cache.yaml" >stats 2>&1
ok "--cache-clear removes them" expect_grep 'removed 6 cache entries' stats
N=5 run_make
ok "after --cache-clear: misses" hits_misses "0 6"

done_testing
