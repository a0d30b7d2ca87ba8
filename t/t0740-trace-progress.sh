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
if ! command -v script >/dev/null 2>&1; then
	skip "progress on a tty: script(1) is not installed"
	skip "progress on a tty: script(1) is not installed"
else
	write_config "workers: 1" "progress: auto"
	# the last job ends only once the line for it is on the terminal
	# (at most 30 s): it is drawn within a quarter second, but a loaded
	# machine need not get there while a fixed sleep lasts ('.' stands for
	# the comma, which would end make's argument)
	write_mk Makefile <<'EOF2'
load @PLUGIN@
$(foreach i,1 2,$(async-try p$i,sleep 0.4))
$(async-try p3,i=0; while ! grep -q '2/3 done. 1 running' tty.out && [ $$i -lt 600 ]; do sleep 0.05; i=$$((i + 1)); done)
$(async-wait)
all: ; @:
EOF2
	script -qec "$MAKE_UT" /dev/null >tty.out 2>&1 </dev/null
	ok "progress: auto draws a line on a terminal" grep -q 'asynccompile: 2/3 done, 1 running' tty.out
	write_mk Makefile <<'EOF2'
load @PLUGIN@
$(foreach i,1 2 3,$(async-try p$i,sleep 0.4))
$(async-wait)
all: ; @:
EOF2
	script -qec "$MAKE_UT -s; echo make-status=\$?" /dev/null >tty.out 2>&1 </dev/null
	ok "progress: auto under -s: make exits 0" grep -q 'make-status=0' tty.out
	ok "progress: auto stays quiet under -s" sh -c '! grep -q "done," tty.out'
fi
run_make
ok "progress: auto, stderr not a terminal: make exits 0" expect_make_ok
ok "progress: auto draws nothing when stderr is not a terminal" expect_no_grep 'done,' err
write_config "workers: 1" "progress: always"
run_make
ok "progress: always draws even into a file" expect_grep 'asynccompile: .*/3 done' err

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
