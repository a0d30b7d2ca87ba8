#!/bin/sh
# test: per-start-method
# async-shell speculation: the record of one run's commands, the next
# run's hits, misses and unused jobs, and the store's guards.
. "$(dirname "$0")/lib.sh"

M=1260.$$
store=$XDG_CACHE_HOME/asynccompile

stat_of() { # key: the value of key= in ./out's stats line
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" out | tail -n1
}
stats_are() { # "speculated hits misses unused memo"
	expect_eq "$1" "$(stat_of speculated) $(stat_of spec_hits) $(stat_of spec_misses) $(stat_of spec_unused) $(stat_of memo_hits)" \
		"speculated spec_hits spec_misses spec_unused memo_hits"
}

write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell echo a-$(V))
B := $(async-shell echo b; exit 3)
BS := $(.SHELLSTATUS)
C := $(async-shell echo c $(A))
$(info result: [$(A)] [$(B)] $(BS) [$(C)])
all: ; @echo $(async-stats)
EOF2
V=1 run_make
ok "first run: make succeeds" expect_make_ok
ok "first run: answers" expect_grep '^result: \[a-1\] \[b\] 3 \[c a-1\]$' out
ok "first run: nothing speculated, three misses" stats_are "0 0 3 0 0"
ok "first run: one record, 0600, in a 0700 store" \
	sh -c '[ "$(ls "$0" | grep -c "^rec-")" = 1 ] &&
	       [ "$(stat -c %a "$0")" = 700 ] && [ "$(stat -c %a "$0"/rec-*)" = 600 ]' "$store"

V=1 run_make
ok "second run: make succeeds" expect_make_ok
ok "second run: the same answers" expect_grep '^result: \[a-1\] \[b\] 3 \[c a-1\]$' out
ok "second run: three speculated, three hits" stats_are "3 3 0 0 0"

# V comes from the environment (not the command line, which is part of the
# record's key): the same makefiles now ask for other commands.
V=2 run_make
ok "changed commands: make succeeds" expect_make_ok
ok "changed commands: the answers of the new commands" expect_grep '^result: \[a-2\] \[b\] 3 \[c a-2\]$' out
# V is in the environment of every command: the one command that stayed
# the same was speculated with V=2, carried from make's own environment
# into its last call's, so its answer is the call's.
ok "changed commands: two misses, two unused, one hit" stats_are "3 1 2 2 0"
ok "changed commands: the same command's answer used (environment carried)" \
	expect_eq 0 "$(stat_of spec_rejected)" spec_rejected
V=2 run_make
ok "after a change: the new record hits" stats_are "3 3 0 0 0"

rm -f "$store"/rec-*
V=2 run_make
ok "deleted record: a first run" stats_are "0 0 3 0 0"
ok "deleted record: the answers" expect_grep '^result: \[a-2\] \[b\] 3 \[c a-2\]$' out

# Damaged records are ignored: every byte flipped in turn in a small copy
# would be slow, so a few kinds of damage.
rec=$(ls "$store"/rec-*)
cp "$rec" good
for damage in truncate flip-key flip-tail empty garbage; do
	cp good "$rec"
	case $damage in
	truncate) head -c 40 good >"$rec" ;;
	flip-key) flip_byte "$rec" 20 ;;
	flip-tail) flip_byte "$rec" $(($(wc -c <good) - 3)) ;;
	empty) : >"$rec" ;;
	garbage) head -c 3000 /dev/urandom >"$rec" ;;
	esac
	V=2 run_make
	ok "$damage record: ignored, right answers" \
		sh -c 'grep -q "^result: \[a-2\] \[b\] 3 \[c a-2\]$" out && grep -q " speculated=0 " out' 
done

# The store's guards.
cp good "$rec"
chmod 660 "$rec"
V=2 run_make
ok "group-writable record: refused" stats_are "0 0 3 0 0"
ok "group-writable record: right answers" expect_grep '^result: \[a-2\] \[b\] 3 \[c a-2\]$' out
cp good "$rec"; chmod 600 "$rec"; chmod 770 "$store"
V=2 run_make
ok "group-writable store: refused" stats_are "0 0 3 0 0"
ok "group-writable store: the record is not rewritten" cmp good "$rec"
chmod 700 "$store"
stage_as_nobody; why=$stage_why
if [ -z "$why" ]; then
	chown nobody "$store"
	V=2 run_make
	ok "store owned by another user: refused" stats_are "0 0 3 0 0"
	ok "store owned by another user: right answers" expect_grep '^result: \[a-2\]' out
	chown 0 "$store"
	# the same store seen from nobody's side: a cache directory of
	# nobody's own holding a store that root owns (and so may not be
	# nobody's); nobody's HOME is root's, which is not nobody's either
	nb=$STAGE/nb
	mkdir -p "$nb/cache/asynccompile" && chmod 777 "$nb" && stage_mk Makefile "$nb/Makefile"
	cp good "$nb/cache/asynccompile/"
	chmod 755 "$nb/cache/asynccompile"; chown nobody "$nb/cache"
	V=2 XDG_CACHE_HOME=$nb/cache ASYNC_COMPILE_DEBUG=2 run_make_as nobody "$nb"
	ok "nobody refuses a store root owns" expect_grep 'refused: owned by another user' err
	ok "nobody: right answers, nothing speculated" \
		sh -c 'grep -q "^result: \[a-2\]" out && grep -q " speculated=0 " out'
	ok "nobody wrote nothing into root's stores" \
		sh -c '[ -z "$(find "$0" "$1" ! -user 0)" ]' "$store" "$nb/cache/asynccompile"
else
	for i in 1 2 3 4 5; do skip "store ownership: $why"; done
fi
printf 'cache_dir: %s/afile/store\n' "$TRASH" >nostore.yaml
: >afile
ASYNC_COMPILE_CONFIG=$TRASH/nostore.yaml V=2 run_make
ok "a store that cannot be created: make succeeds" expect_make_ok
ok "a store that cannot be created: right answers, no speculation" \
	sh -c 'grep -q "^result: \[a-2\] \[b\] 3 \[c a-2\]$" out && grep -q " speculated=0 " out'
ok "a store that cannot be created: silent" expect_eq "" "$(cat err)"
ASYNC_COMPILE_CONFIG=$TRASH/nostore.yaml ASYNC_COMPILE_DEBUG=2 V=2 run_make
ok "a store that cannot be created: ASYNC_COMPILE_DEBUG says why" expect_grep 'async-shell: no store' err

V=2 ASYNC_COMPILE_SPECULATE=0 run_make
ok "ASYNC_COMPILE_SPECULATE=0: nothing speculated" stats_are "0 0 3 0 0"
{ [ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"; echo "speculate: false"; } >nospec.yaml
ASYNC_COMPILE_CONFIG=$TRASH/nospec.yaml V=2 run_make
ok "speculate: false: nothing speculated" stats_are "0 0 3 0 0"

# Speculation nobody asks for is cancelled once the makefiles are read,
# before recipes run, and its token comes back: a jobserver of our own
# with three token bytes.  The slow command waits for a lock the test
# holds (it writes nothing, so it is run ahead of need; the lock is no
# input of its answer).  (The recipe's pgrep runs without the ASan
# runtime an ASan run preloads into make: preloaded, pgrep can hang in
# its own start-up.)
: >lk
settle
write_mk Makefile <<EOF2
load @PLUGIN@
ifeq (\$(wildcard ask),ask)
S := \$(async-shell $TEST_HELPERDIR/lockwait lk; echo slow)
endif
F := \$(async-shell echo fast)
all:
	@i=0; while env -u LD_PRELOAD pgrep -f '^$TEST_HELPERDIR/lockwait lk\$\$' >/dev/null; do i=\$\$((i+1)); [ \$\$i -gt 100 ] && { echo STILL; exit 0; }; sleep 0.05; done; echo GONE
	@echo \$(async-stats)
EOF2
: >ask
run_make
ok "recording a slow command" expect_grep 'spec_misses=2' out
rm ask
exec 9<lk
flock 9
timeout -k 5 60 "$TEST_HELPERDIR/jsbox.py" pipe abc -- "$MAKE_UT" >out 2>err 9<&-; rc=$?
exec 9<&-
ok "unused speculation: make succeeds" expect_eq 0 "$rc" "exit status"
# (jsbox's MAKEFLAGS are in the environment: under make 4.3 carried into
# the fast command's, whose answer is used; make 4.4 gives $(shell) a
# MAKEFLAGS of its own, now with -j, so the answer is refused and it runs)
ok "unused speculation: counted" \
	expect_eq "2 1 1" "$(stat_of speculated) $(($(stat_of spec_hits) + $(stat_of spec_misses))) $(stat_of spec_unused)" \
	"speculated spec_hits+spec_misses spec_unused"
ok "unused speculation: killed before the recipe ran" expect_grep '^GONE$' out
ok "unused speculation: the same token bytes come back" expect_grep '^tokens:abc$' out
ok "unused speculation: no token message" expect_no_grep INTERNAL err
ok "unused speculation: nothing left" \
	sh -c '! pgrep -f "^$0/lockwait lk\$"' "$TEST_HELPERDIR"

# Memoized within one make process: a recursive variable expanded three
# times runs its command once.  Each run says so on stderr (a command that
# wrote a file would run each time, as with $(shell)).
write_mk Makefile <<'EOF2'
load @PLUGIN@
X = $(async-shell echo run >&2; echo x)
$(info $(X) $(X) $(X))
all: ; @echo $(async-stats)
EOF2
run_make
ok "memo: one run for three expansions" expect_eq 1 "$(grep -c '^run$' err)" "runs"
ok "memo: two memo hits" expect_eq 2 "$(stat_of memo_hits)" "memo_hits"
ok "memo: the answer each time" expect_grep '^x x x$' out

# Kbuild-style sub-makes: one makefile, obj= on the command line; each
# sub-make keeps its own record.
write_mk sub.mk <<'EOF2'
load @PLUGIN@
R := $(async-shell echo in-$(obj))
all: ; @echo "$(obj): [$(R)] $(async-stats)"
EOF2
cat >Makefile <<'EOF2'
all: ; @$(MAKE) -s -f sub.mk obj=a; $(MAKE) -s -f sub.mk obj=b
EOF2
rm -f "$store"/rec-*
run_make -j2
ok "sub-makes: first run answers" sh -c 'grep -q "^a: \[in-a\] .* spec_misses=1 " out && grep -q "^b: \[in-b\] .* spec_misses=1 " out'
run_make -j2
ok "sub-makes: each has its own record" \
	sh -c 'grep -q "^a: \[in-a\] .*speculated=1 spec_hits=1 spec_misses=0 " out &&
	       grep -q "^b: \[in-b\] .*speculated=1 spec_hits=1 spec_misses=0 " out' 
ok "sub-makes: two records" expect_eq 2 "$(ls "$store" | grep -c '^rec-')" "records"

# Two makes at once in one directory, with different goals: each writes
# its own record whole, and each hits on the next run.
rm -f "$store"/rec-*
write_mk Makefile <<'EOF2'
load @PLUGIN@
R := $(async-shell echo goal-$(MAKECMDGOALS))
one two: ; @echo "$@: [$(R)] $(async-stats)"
EOF2
for round in 1 2; do
	"$MAKE_UT" one >out.one 2>err.one &
	p1=$!
	"$MAKE_UT" two >out.two 2>err.two &
	p2=$!
	wait $p1; s1=$?
	wait $p2; s2=$?
	ok "two makes at once, round $round: both succeed" expect_eq "0 0" "$s1 $s2"
	ok "two makes at once, round $round: right answers" \
		sh -c 'grep -q "^one: \[goal-one\]" out.one && grep -q "^two: \[goal-two\]" out.two'
done
ok "two makes at once: the second round hit" \
	sh -c 'grep -q "spec_hits=1 " out.one && grep -q "spec_hits=1 " out.two'

# -n, -q and -s: async-shell runs where $(shell) runs, as $(shell) does.
write_mk Makefile <<'EOF2'
load @PLUGIN@
P := $(async-shell echo parse >>ran; echo p)
all: ; @echo recipe $(P) $(async-shell echo recipe >>ran; echo r)
EOF2
for flag in -n -q -s; do
	rm -f ran
	run_make $flag
	cp ran ran.async 2>/dev/null || : >ran.async
	cp out out.async
	rm -f ran
	sed 's/async-shell/shell/g' Makefile >Makefile.plain
	run_make $flag -f Makefile.plain
	ok "$flag: the same commands run as with \$(shell)" expect_eq "$(cat ran)" "$(cat ran.async)"
	ok "$flag: the same output as with \$(shell)" expect_eq "$(cat out)" "$(cat out.async)"
done

# Loaded through MAKEFILES, every make of a build has read the same
# files at load; a top make that only re-invokes itself with -f (as
# Kbuild's does) must not overwrite the inner make's record with its own
# empty one.
mkdir mf && write_mk mf/frag.mk <<'EOF2'
load @PLUGIN@
EOF2
write_mk mf/Makefile <<'EOF2'
ifeq ($(MAKELEVEL),0)
all: ; @$(MAKE) --no-print-directory -f $(CURDIR)/Makefile all
else
P := $(async-shell echo inner)
all: ; @echo inner-stats $(P) $(async-stats)
endif
EOF2
MAKEFILES=$TRASH/mf/frag.mk run_make -C mf all
MAKEFILES=$TRASH/mf/frag.mk run_make -C mf all
ok "MAKEFILES, a make re-invoking itself with -f: make succeeds" expect_make_ok
ok "MAKEFILES, a make re-invoking itself with -f: the inner make's second run is speculated" \
	expect_grep '^inner-stats inner .* spec_hits=1 ' out

# The trace marks speculated jobs.
write_mk Makefile <<'EOF2'
load @PLUGIN@
R := $(async-shell echo traced)
all: ; @:
EOF2
{ cat "${ASYNC_COMPILE_CONFIG:-/dev/null}"; echo "trace: $TRASH/trace.json"; } >trace.yaml
ASYNC_COMPILE_CONFIG=$TRASH/trace.yaml run_make
ASYNC_COMPILE_CONFIG=$TRASH/trace.yaml run_make
ok "trace: the speculated job is marked" expect_grep '"cat":"speculated"' trace.json

# dkms copies the module into a fresh build directory for every build; the
# probes only make and remove scratch in it (and pass through it: cd).
# A directory passed through is
# an input by its existence, type and mode only, so the answers hold.
mkdir dkms-src
write_mk dkms-src/Makefile <<'EOF2'
load @PLUGIN@
try-run = $(async-shell set -e; T=.tmp_$$$$; mkdir -p $$T; if ($(1)) >/dev/null 2>&1; then echo "$(2)"; else echo "$(3)"; fi; rm -rf $$T)
A := $(call try-run,cd $(CURDIR) && touch $$T/x && test -f $$T/x,yes,no)
B := $(call try-run,test -f $$T/none,yes,no)
$(info dkms: $(A) $(B))
all: ; @echo $(async-stats)
EOF2
for i in 1 2 3; do
	# the new copy is made before the old goes: another inode
	cp -r dkms-src dkms-build.new && rm -rf dkms-build && mv dkms-build.new dkms-build
	cd dkms-build && run_make
	cd .. && cp dkms-build/out out && cp dkms-build/err err
done
ok "a fresh build directory each run: make succeeds" expect_make_ok
ok "a fresh build directory each run: the answers" expect_grep '^dkms: yes no$' out
ok "a fresh build directory each run: both speculated and used" stats_are "2 2 0 0 0"

# make started from another shell state: a cd (OLDPWD), a variable a new
# terminal has, one the makefile sets itself.  A speculated job runs with
# the last call's environment carried forward by what changed in make's
# own, so it is the call's environment and its answer is used.
mkdir envs
write_mk envs/Makefile <<'EOF2'
load @PLUGIN@
export FROM_MK := mk
A := $(async-shell echo $$OLDPWD $$NEW_A $$NEW_B $$FROM_MK)
B := $(async-shell echo b)
S := $(shell echo $$OLDPWD $$NEW_A $$NEW_B $$FROM_MK)
$(info envs: $(A))
$(info shell: $(S))
all: ; @echo $(async-stats)
EOF2
cd envs
export OLDPWD=/one NEW_A=a FROM_MK=user1
run_make
unset NEW_A
export OLDPWD=/two NEW_B=b FROM_MK=user2
run_make
unset NEW_B FROM_MK
cd .. && cp envs/out out && cp envs/err err
ok "another OLDPWD and a new variable: make succeeds" expect_make_ok
ok "... the answer is \$(shell)'s" \
	expect_eq "$(sed -n 's/^shell: //p' out)" "$(sed -n 's/^envs: //p' out)" "answers"
ok "... the new values" expect_grep '^envs: /two b ' out
ok "... both speculated and used" stats_are "2 2 0 0 0"

# An environment nothing carries forward (the config's env: moved):
# the speculated answer is not used, and ASYNC_COMPILE_DEBUG names the
# variable, never its value.
mkdir cenv
write_mk cenv/Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell echo $$CFG_VAR)
$(info cenv: $(A))
all: ; @echo $(async-stats)
EOF2
cd cenv
write_config "env: { CFG_VAR: first-secret }"
run_make
write_config "env: { CFG_VAR: second-secret }"
ASYNC_COMPILE_DEBUG=2 run_make
cd .. && cp cenv/out out && cp cenv/err err
ok "another config env: make succeeds, with the new value" \
	sh -c '[ "$0" -eq 0 ] && grep -q "^cenv: second-secret\$" out' "$make_status"
ok "... the speculated answer is not used" stats_are "1 0 1 0 0"
ok "... ASYNC_COMPILE_DEBUG names the variable" \
	expect_grep 'speculated answer not used: the environment differs in CFG_VAR' err
ok "... and not its values" expect_no_grep 'secret' err

done_testing
