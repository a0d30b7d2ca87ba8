#!/bin/sh
# test: per-start-method
# A job that was queued and never waited for is an error: make exits 2
# and names the job and the line that queued it.  $(async-drop) lets one
# go; a probe queued while makefiles are read and left for the recipe of
# a target that is up to date is no error; -n and -q keep make's status.
. "$(dirname "$0")/lib.sh"

M=$$

# A recipe whose $(async-wait) is missing: the step that never reported
# and a slow one, which make's end kills.
write_mk Makefile <<EOF2
load @PLUGIN@
all:
	\$(async-compile b1,echo b1-ran)
	\$(async-compile slow,sleep 1211.$M)
	@echo recipe-done
EOF2
run_make
ok "missing wait in a recipe: make exits 2" expect_eq 2 "$make_status" "exit status"
ok "missing wait in a recipe: the recipe itself ran" expect_grep '^recipe-done$' out
ok "missing wait in a recipe: the message names the job and its line" \
	expect_grep "^Makefile:3: \*\*\* asynccompile: build step 'b1' was queued here and never waited for" err
ok "missing wait in a recipe: each job has its line" \
	expect_grep "^Makefile:4: \*\*\* asynccompile: build step 'slow' was queued here" err
ok "missing wait in a recipe: no token message" expect_no_grep INTERNAL err
ok "missing wait in a recipe: no job is left" none_left "1211.$M"

# The same as a sub-make of a jobserver whose tokens are counted: the
# slow step holds one when make ends.
for style in pipe fifo; do
	if [ "$style" = fifo ] && [ "$(make_version)" = 4.3 ]; then
		skip "fifo jobserver: make $(make_version) only speaks pipes"
		skip "fifo jobserver: make $(make_version) only speaks pipes"
		continue
	fi
	timeout -k 5 60 "$TEST_HELPERDIR/jsbox.py" "$style" abc -- "$MAKE_UT" >out 2>err; rc=$?
	ok "$style jobserver, missing wait: make exits 2" expect_eq 2 "$rc" "exit status"
	ok "$style jobserver, missing wait: every token comes back" \
		sh -c 'tail -n1 out | grep -qx "tokens:abc" || { cat out err; exit 1; }'
done
ok "jobserver runs: no job is left" none_left "1211.$M"

# A probe queued in a recipe and never waited for is one too.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	$(async-try p1,true)
	@:
EOF2
run_make
ok "probe queued in a recipe, never waited for: make exits 2" expect_eq 2 "$make_status" "exit status"
ok "probe queued in a recipe: the message names it" \
	expect_grep "^Makefile:3: \*\*\* asynccompile: probe 'p1' was queued here" err

# A parse-time wait misspelled: make reads $(async-wiat) as an empty
# variable.  Reading the answers is an error at the line that reads them.
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try HAVE_X,true)
$(async-wiat)
CFLAGS := $(if $(filter 0,$(HAVE_X.status)),-DHAVE_X)
all: ; @echo CFLAGS=$(CFLAGS)
EOF2
run_make
ok "misspelled parse-time wait: make exits 2" expect_eq 2 "$make_status" "exit status"
ok "misspelled parse-time wait: the line that reads the answer is named, and the queueing one" \
	expect_grep "^Makefile:4: \*\*\* asynccompile: the results of probe 'HAVE_X' (queued at Makefile:2) are read before any \$(async-wait) waited for it" err
ok "misspelled parse-time wait: no recipe ran" expect_no_grep CFLAGS out

# A build step queued while makefiles are read, its wait misspelled:
# nothing reads an answer, make's end reports it.
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-compile gen,echo generated)
$(async_wait)
all: ; @echo all-done
EOF2
run_make
ok "misspelled parse-time wait of a build step: make exits 2" expect_eq 2 "$make_status" "exit status"
ok "misspelled parse-time wait of a build step: named at exit" \
	expect_grep "^Makefile:2: \*\*\* asynccompile: build step 'gen' was queued here and never waited for" err

# $(async-drop NAME ...): a probe still running and a build step let go.
write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try p,sleep 1212.$M)
\$(async-compile b,echo b)
\$(async-drop p b)
all:
	\$(async-compile r,sleep 1213.$M)
	\$(async-drop r)
	@echo dropped
EOF2
run_make
ok "async-drop: make exits 0" expect_make_ok
ok "async-drop: nothing said" expect_eq "" "$(cat err)" "stderr"
ok "async-drop: the recipe ran" expect_grep '^dropped$' out
ok "async-drop: the dropped jobs are stopped" none_left "121[23].$M"

write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try p,true)
$(async-drop q)
all: ; @:
EOF2
run_make
ok "async-drop of a name nobody queued: an error" \
	expect_grep "^Makefile:3: \*\*\* async-drop: no job named 'q' is waiting" err

# A probe queued while makefiles are read, waited for in the recipe of
# a target: once the target is up to date nothing waits for it, and the
# incremental build still succeeds, quietly.
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try CC_VERSION,echo 12.2)
stamp:
	$(async-wait CC_VERSION)
	@echo cc=$(CC_VERSION.out) >$@
EOF2
rm -f stamp
run_make
ok "parse-time probe, recipe wait: the first build succeeds" expect_make_ok
ok "parse-time probe, recipe wait: the recipe got the answer" expect_eq "cc=12.2" "$(cat stamp)"
run_make
ok "up-to-date rebuild: make exits 0" expect_make_ok
ok "up-to-date rebuild: make says it is up to date" expect_grep "'stamp' is up to date" out
ok "up-to-date rebuild: no warning" expect_eq "" "$(cat err)" "stderr"

# -n shows what would run: the missing wait is a warning, the status 0.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	$(async-compile b1,echo b1-ran)
	@echo recipe-done
EOF2
run_make -n
ok "-n, missing wait in a recipe: make exits 0" expect_make_ok
ok "-n: make prints the recipe" expect_grep '^echo recipe-done$' out
ok "-n: a warning names the job and its line" \
	expect_grep "^Makefile:3: asynccompile: warning: build step 'b1' was queued here and never waited for" err
# -q answers "is it up to date": 1, whatever the recipe would queue.
run_make -q
ok "-q, missing wait in a recipe: make exits 1, as without the plugin" expect_eq 1 "$make_status" "exit status"

# A make that failed keeps its status.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: bad good
bad: ; @exit 3
good:
	$(async-compile b1,true)
	@:
EOF2
run_make -k
ok "make failed already (-k): it exits 2, as it would" expect_eq 2 "$make_status" "exit status"
ok "make failed already (-k): the failure is make's" expect_grep 'bad\] Error 3' err

# A sub-make's error fails its recipe in the parent.
mkdir -p sub
write_mk sub/Makefile <<'EOF2'
load @PLUGIN@
all:
	$(async-compile s1,true)
	@:
EOF2
printf 'all: ; +@$(MAKE) -s -C sub\n' >Makefile
run_make -j2
ok "recursive make: the sub-make's unwaited step fails the parent" \
	sh -c '[ "$0" -eq 2 ] && grep -q "Makefile:3: \*\*\* asynccompile: build step .s1." err && grep -q "\[Makefile:1: all\] Error 2" err || { cat err; exit 1; }' "$make_status"
ok "recursive make: no token message" expect_no_grep INTERNAL err

done_testing
