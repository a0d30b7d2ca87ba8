#!/bin/sh
# Effects that are not file writes (issue 29, items 3 and 4): a command
# that signals another process, or changes its priority, does so once per
# call, as $(shell) does: never ahead of need, never answered from the
# memo or the cache; a command that reads another process's state
# (kill -0) answers from that state now.  Each case runs the same
# makefiles with $(shell) in ./sh and with $(async-shell) in ./as
# (t4062's pattern) and compares the answers, and what the listener
# (t/helpers/siglisten) of each directory was sent.
. "$(dirname "$0")/lib.sh"

LISTEN=$TEST_HELPERDIR/siglisten
case $LISTEN in /*) ;; *) LISTEN=$TEST_CWD/$LISTEN ;; esac
[ -x "$LISTEN" ] || skip_all "no $LISTEN (run make test-build)"

M=1266.$$ # the sleeps this test starts, found by none_left
mkdir sh as
for d in sh as; do
	(cd $d && exec "$LISTEN" got lpid </dev/null >/dev/null 2>&1) &
done
trap 'kill $(cat sh/lpid as/lpid sh/tpid as/tpid 2>/dev/null) 2>/dev/null; test_cleanup' EXIT
wait_until test -s sh/lpid || skip_all "the listener did not start"
wait_until test -s as/lpid || skip_all "the listener did not start"

variant_mk() { # file: stdin with FN replaced, into both directories
	tl_text=$(cat)
	printf '%s\n' "$tl_text" | sed 's/FN/shell/g' | write_mk "sh/$1"
	printf '%s\n' "$tl_text" | sed 's/FN/async-shell/g' | write_mk "as/$1"
}
# run_both ARGS: make in each directory, L naming that directory's
# listener and T its own target process; outputs in sh.out/as.out.
run_both() {
	for d in sh as; do
		(cd $d && L=$(cat lpid) T=$(cat tpid 2>/dev/null) run_make "$@"
		 echo "$make_status" >.status)
		cp $d/out $d.out; cp $d/err $d.err
	done
	sh_status=$(cat sh/.status); as_status=$(cat as/.status)
}
same_answers() {
	expect_eq "$sh_status" "$as_status" "make's status (\$(shell) vs async-shell)" &&
	expect_eq "$(grep -v '^make\|^STATS' sh.out)" "$(grep -v '^make\|^STATS' as.out)" \
		"output (\$(shell) vs async-shell)"
}
# signals DIR: what DIR's listener was sent so far, every signal counted
# (a mark, sent now, is taken after every signal sent before it)
signals() {
	tl_n=$(($(grep -c '^mark' "$1/got") + 1)) # (0 lines: "0")
	kill -s RTMIN+2 "$(cat "$1/lpid")"
	wait_until grep -qx "mark $tl_n" "$1/got" || { echo "no mark $tl_n"; return 1; }
	grep -c '^sig$' "$1/got" || : # (0 lines: grep -c fails)
}
same_signals() { # expected: both listeners got that many signals
	expect_eq "$1" "$(signals sh)" "signals from \$(shell)" &&
	expect_eq "$1" "$(signals as)" "signals from async-shell"
}
stat_of() { # key
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" as.out | tail -n1
}
config_mk() { # the Makefile: stdin below the load of c.yaml's config
	{ printf 'ASYNC_COMPILE_CONFIG := c.yaml\nload @PLUGIN@\n'; cat; } | variant_mk Makefile
}
cfg() { # cache: true or false: c.yaml
	for d in sh as; do
		{ [ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"
		  echo "cache: $1"; } >$d/c.yaml
	done
}
# the next case: no record, no cache, no listener counts of the last
fresh() {
	rm -rf "$XDG_CACHE_HOME/asynccompile" sh/Makefile as/Makefile
	for d in sh as; do base=$(signals $d) && echo "$base" >$d/base; done
}
since() { # dir: signals since fresh
	echo $(($(signals "$1") - $(cat "$1/base")))
}
same_since() { # expected
	expect_eq "$1" "$(since sh)" "signals from \$(shell)" &&
	expect_eq "$1" "$(since as)" "signals from async-shell"
}
# A target process per directory (T in run_both), a child of the test's
targets_start() {
	for d in sh as; do
		(cd $d && exec sleep $M </dev/null >/dev/null 2>&1) &
		echo $! >$d/tpid
	done
}
# ...killed and reaped
targets_end() {
	kill "$(cat sh/tpid)" "$(cat as/tpid)"
	wait "$(cat sh/tpid)" "$(cat as/tpid)"
	rm -f sh/tpid as/tpid
}
# A slow makefile read before the calls (t/lib.sh): by then make has
# started, finished or cancelled the recorded commands.
slow_mk

# -- item 3: a signal to another process, in a run that does not ask for it
fresh
variant_mk Makefile <<'EOF2'
load @PLUGIN@
include slow.mk
ifeq ($(ASK),1)
X := $(FN kill -s RTMIN+1 $(L) && echo sent)
endif
$(info X=$(X))
all: ; @:
EOF2
n=0
for ask in 1 1 0 0 1; do
	[ $ask = 1 ] && n=$((n + 1))
	ASK=$ask run_both
	ok "kill, asked for: $ask: the listener got $n signal(s), as from \$(shell)" same_since $n
	ok "kill, asked for: $ask: the same answers as \$(shell)" same_answers
done

# -- item 3: twice in one make (the memo), three makes
fresh
variant_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(FN kill -s RTMIN+1 $(L) && echo sent)
B := $(FN kill -s RTMIN+1 $(L) && echo sent)
$(info A=$(A) B=$(B))
all: ; @:
EOF2
for run in 1 2 3; do
	run_both
	ok "kill twice per make, run $run: $((2 * run)) signals, as from \$(shell)" \
		same_since $((2 * run))
	ok "kill twice per make, run $run: the same answers as \$(shell)" same_answers
done

# -- item 3: with the answer cache
fresh
cfg true
config_mk <<'EOF2'
X := $(FN kill -s RTMIN+1 $(L) && echo sent)
$(info X=$(X))
all: ; @:
EOF2
for run in 1 2 3; do
	run_both
	ok "kill, cache true, run $run: $run signal(s), as from \$(shell)" same_since $run
	ok "kill, cache true, run $run: the same answers as \$(shell)" same_answers
done

# -- item 3: renice of another process, twice per make and cached: each
# call sets the priority and says what it was, as \$(shell)'s does
fresh
cfg true
targets_start
config_mk <<'EOF2'
A := $(FN renice -n 1 -p $(T) | sed 's/^[0-9]* //')
B := $(FN renice -n 1 -p $(T) | sed 's/^[0-9]* //')
$(info A=$(A))
$(info B=$(B))
all: ; @:
EOF2
run_both
# the targets start at the test's own niceness (0, or a stress run's)
ok "renice, run 1: the first call changed the priority, the second saw it changed" \
	sh -c 'grep -qx "A=(process ID) old priority $0, new priority 1" sh.out &&
	       grep -qx "B=(process ID) old priority 1, new priority 1" sh.out ||
	       { cat sh.out sh.err; exit 1; }' "$(nice)"
ok "renice, run 1: the same answers as \$(shell)" same_answers
run_both
ok "renice, run 2 (cache, record): the same answers as \$(shell)" same_answers
ok "renice: the priority both targets ended with" \
	expect_eq "1 1" "$(echo $(ps -o ni= -p "$(cat sh/tpid)") $(ps -o ni= -p "$(cat as/tpid)"))"
targets_end

# -- item 4: another process's state, cached and speculated: kill -0
# answers "dead" once the process is gone
fresh
cfg true
targets_start
config_mk <<'EOF2'
S := $(FN kill -0 $(T) 2>/dev/null && echo alive || echo dead)
$(info S=$(S))
all: ; @:
EOF2
run_both
ok "kill -0 of a live process: alive" expect_grep '^S=alive$' as.out
ok "the same answer as \$(shell)" same_answers
run_both
ok "and again (cache, record): the same answer as \$(shell)" same_answers
targets_end # reaped: no zombie left for kill -0 to find
run_both
ok "kill -0 once the process has died: dead" expect_grep '^S=dead$' as.out
ok "the same answer as \$(shell)" same_answers
none_left $M

# -- item 3: ahead of need, an act is refused, not done.  A record that
# says the kill was pure (as an older tracer, blind to kill, wrote it)
# gets it speculated: the speculated run must not signal, and make then
# runs it for real, once.
if command -v python3 >/dev/null; then
	fresh
	cfg false
	config_mk <<'EOF2'
X := $(FN kill -s RTMIN+1 $(L) && echo sent || echo refused)
$(info X=$(X))
$(info STATS $(async-stats))
all: ; @:
EOF2
	run_both
	ok "kill, run 1: sent" expect_grep '^X=sent$' as.out
	for rec in "$XDG_CACHE_HOME"/asynccompile/rec-*; do
		python3 "$TEST_ROOT/t/helpers/record-pure.py" "$rec"
	done
	run_both
	ok "a record that says pure: the kill was speculated, and its answer not used" \
		sh -c '[ "$0" = 1 ] && [ "$1" = 1 ] || { echo "speculated=$0 spec_rejected=$1"; exit 1; }' \
		"$(stat_of speculated)" "$(stat_of spec_rejected)"
	ok "speculated kill: 2 signals in 2 makes, as from \$(shell)" same_since 2
	ok "speculated kill: the same answers as \$(shell)" same_answers
else
	skip "no python3 to write the record of an older tracer"
fi

done_testing
