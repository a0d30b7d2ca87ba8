#!/bin/sh
# trace: writes a valid Chrome trace; progress: one updating line on a
# terminal, nothing when stderr is not a terminal or make runs with -s.
. "$(dirname "$0")/lib.sh"

write_config "workers: 2" "trace: $TRASH/trace.json"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(foreach i,1 2 3 4,$(async-try p$i,sleep 0.1; echo $i))
$(async-wait)
all: ; $(async-compile c1,echo "quote\" back\\slash")$(async-wait)
EOF2
run_make -s
ok "make with trace: succeeds" expect_make_ok
ok "the trace is valid JSON with one span per job" \
	"$TEST_HELPERDIR/check-trace.py" "$TRASH/trace.json" p1 p2 p3 p4 c1
ok "no temporary trace file is left behind" sh -c '[ "$(ls trace.json* | wc -l)" -eq 1 ]'
ok "the trace is readable, not executable" sh -c '[ "$(stat -c %a trace.json)" = 644 ]'
ok "commands are escaped in the trace" grep -q 'quote\\\\\\" back\\\\\\\\slash' trace.json

# The same build again: the top-level make starts the file afresh.
run_make -s
ok "a second build: make succeeds" expect_make_ok
ok "a second build: the trace holds that build's spans only" \
	"$TEST_HELPERDIR/check-trace.py" "$TRASH/trace.json" p1 p2 p3 p4 c1

# A recursive build: every make's jobs land in the one file, one process
# track per make, two sub-makes finishing side by side included.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: suba subb
	$(async-compile top1,echo top)
	$(async-wait)
suba subb:
	+$(MAKE) -f sub.mk NAME=$@
EOF2
write_mk sub.mk <<'EOF2'
load @PLUGIN@
all:
	$(async-compile $(NAME).1,echo one)
	$(async-compile $(NAME).2,echo two)
	$(async-wait)
EOF2
run_make -s -j4
ok "recursive build with trace: make succeeds" expect_make_ok
ok "recursive build: the spans of all three makes are in the file" \
	"$TEST_HELPERDIR/check-trace.py" --makes 3 "$TRASH/trace.json" top1 suba.1 suba.2 subb.1 subb.2
ok "recursive build: no temporary file is left behind" sh -c '[ "$(ls trace.json* | wc -l)" -eq 1 ]'
run_make -s -j4
ok "recursive build again: the trace holds that build only" \
	"$TEST_HELPERDIR/check-trace.py" --makes 3 "$TRASH/trace.json" top1 suba.1 suba.2 subb.1 subb.2

write_config "workers: 2" "trace: $TRASH/no/such/dir/trace.json"
run_make -s
ok "an unwritable trace is a warning, not a failure" \
	sh -c '[ "$0" -eq 0 ] && grep -q "cannot write the trace file" err' "$make_status"
ok "... which says what failed" \
	expect_grep "trace.json: cannot open its directory $TRASH/no/such/dir: No such file or directory" err

write_config "workers: 2" "trace: /proc/version"
run_make -s
ok "a trace path where no file can be created: make succeeds" expect_make_ok
ok "... and the warning says which step failed" \
	expect_grep "cannot write the trace file /proc/version: cannot create the temporary file /proc/version\\.[^ ]* beside it: " err
ok "... and /proc/version is untouched" grep -q Linux /proc/version

# progress, under a pseudo-terminal
three_probes_mk() {
	write_mk Makefile <<'EOF2'
load @PLUGIN@
$(foreach i,1 2 3,$(async-try p$i,sleep 0.4))
$(async-wait)
all: ; @:
EOF2
}
# A line of tty.out as drawn: what follows the erase ("\r", ESC [K).
drawn_lines() { tr '\r' '\n' <tty.out | sed -n "s/^$(printf '\033')\\[K//p"; }
# The line was erased: the next thing printed starts on a clean line.
erased_before() { [ "$(drawn_lines | tail -n 1)" = "$1" ]; }
erased_before_line() { drawn_lines | grep -qx "$1"; }
# Every line drawn fits in $1 columns.
lines_fit() { [ -n "$(drawn_lines)" ] && [ -z "$(drawn_lines | awk -v w="$1" 'length > w')" ]; }
# Wait in a step or probe until the pattern is on the terminal (30 s at most).
until_tty() { printf 'i=0; while ! grep -q %s tty.out && [ $$i -lt 600 ]; do sleep 0.05; i=$$((i + 1)); done' "$1"; }
if ! command -v script >/dev/null 2>&1; then
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
		skip "progress on a tty: script(1) is not installed"
	done
else
	write_config "workers: 1" "progress: auto"
	# the last job ends only once the line for it is on the terminal
	# (at most 30 s): it is drawn within a quarter second, but a loaded
	# machine need not get there while a fixed sleep lasts ('.' stands for
	# the comma, which would end make's argument)
	write_mk Makefile <<EOF2
load @PLUGIN@
\$(foreach i,1 2,\$(async-try p\$i,sleep 0.4))
\$(async-try p3,$(until_tty "'2/3 done. 1 running. 0 queued. [0-9]*\.[0-9]s: p3'"))
\$(async-wait)
all: ; @:
EOF2
	script -qec "$MAKE_UT; echo make-status=\$?" /dev/null >tty.out 2>&1 </dev/null
	ok "progress: auto draws a line on a terminal" grep -q 'asynccompile: 2/3 done, 1 running' tty.out
	ok "... which names the oldest running step and the wait's time so far" \
		grep -q 'asynccompile: 2/3 done, 1 running, 0 queued, [0-9]*\.[0-9]s: p3' tty.out
	ok "... and is erased when the wait ends" erased_before make-status=0

	# A name too long for the terminal loses its middle; the line fits.
	long=$(printf 'dir%s/' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)tail.o
	write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try $long,$(until_tty "'queued. .*: dir1/.*\.\.\..*tail\.o'"))
\$(async-wait)
all: ; @:
EOF2
	script -qec "stty cols 72; $MAKE_UT; echo make-status=\$?" /dev/null >tty.out 2>&1 </dev/null
	ok "a long name on a 72-column terminal: make exits 0" grep -q 'make-status=0' tty.out
	ok "... the name keeps its two ends" grep -q ': dir1/.*\.\.\..*tail\.o' tty.out
	ok "... and no line is wider than 71 columns" lines_fit 71

	three_probes_mk
	script -qec "$MAKE_UT -s; echo make-status=\$?" /dev/null >tty.out 2>&1 </dev/null
	ok "progress: auto under -s: make exits 0" grep -q 'make-status=0' tty.out
	ok "progress: auto stays quiet under -s" sh -c '! grep -q "done," tty.out'

	# A recipe wait: its collector draws the line, and erases it before
	# make's next line.
	write_mk Makefile <<EOF2
load @PLUGIN@
all:
	@\$(async-compile s1,$(until_tty "'0/1 done. 1 running. 0 queued. [0-9]*\.[0-9]s: s1'"))
	@\$(async-wait)
	@echo after
EOF2
	script -qec "stty cols 72; $MAKE_UT; echo make-status=\$?" /dev/null >tty.out 2>&1 </dev/null
	ok "a recipe wait on a terminal: make exits 0" grep -q 'make-status=0' tty.out
	ok "... and the wait draws the status line" \
		grep -q 'asynccompile: 0/1 done, 1 running, 0 queued, [0-9]*\.[0-9]s: s1' tty.out
	ok "... which is erased before make's next line" erased_before_line after
	ok "... and fits the terminal" lines_fit 71

	# Under -j2 make may start another target beside a recipe wait, and
	# under -s nothing is drawn: the step runs three times as long as a
	# wait takes to draw its first line.
	write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	@$(async-compile s1,sleep 1.5)
	@$(async-wait)
EOF2
	script -qec "$MAKE_UT -j2; echo make-status=\$?" /dev/null >tty.out 2>&1 </dev/null
	ok "a recipe wait under -j2: make exits 0" grep -q 'make-status=0' tty.out
	ok "... and draws nothing" sh -c '! grep -q "done," tty.out'
	script -qec "$MAKE_UT -s; echo make-status=\$?" /dev/null >tty.out 2>&1 </dev/null
	ok "a recipe wait under -s draws nothing" \
		sh -c 'grep -q make-status=0 tty.out && ! grep -q "done," tty.out'
fi
three_probes_mk
run_make
ok "progress: auto, stderr not a terminal: make exits 0" expect_make_ok
ok "progress: auto draws nothing when stderr is not a terminal" expect_no_grep 'done,' err
write_config "workers: 1" "progress: always"
run_make
ok "progress: always draws even into a file" expect_grep 'asynccompile: .*/3 done' err
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	@$(async-compile s1,i=0; while ! grep -q '0/1 done. 1 running.*: s1' err && [ $$i -lt 600 ]; do sleep 0.05; i=$$((i + 1)); done)
	@$(async-wait)
EOF2
run_make
ok "progress: always, a recipe wait: make exits 0" expect_make_ok
ok "... and its collector draws the line into the file" expect_grep 'asynccompile: 0/1 done, 1 running, 0 queued, .*: s1' err

# The line is redrawn in place, so it must not be drawn while a recipe of
# make's runs: that would wipe what the recipe printed without a newline.
# Recipe `other` prints a partial line and runs until the build step that
# `waiter` waits for has ended; the step runs 1.5 s past that partial line,
# three times as long as a wait takes to draw its first line.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: other waiter
other:
	@printf 'partial' >&2; i=0; while [ ! -e step.done ] && [ $$i -lt 600 ]; do sleep 0.05; i=$$((i + 1)); done
waiter:
	$(async-compile s1,i=0; while ! grep -q partial err && [ $$i -lt 600 ]; do sleep 0.05; i=$$((i + 1)); done; sleep 1.5; touch step.done)
	@$(async-wait)
EOF2
rm -f step.done
run_make -j3
ok "progress beside a running recipe: make exits 0" expect_make_ok
ok "progress beside a running recipe: its partial line is not erased" \
	expect_no_grep 'done, ' err

done_testing
