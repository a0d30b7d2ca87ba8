#!/bin/sh
# test: per-start-method
# What make itself keeps while the plugin runs inside it: its recipes
# see none of the plugin's descriptors, its children's statuses stay its
# own, and its signals go to its own thread.
. "$(dirname "$0")/lib.sh"

write_config "workers: 2"

# The same recipe line with and without the plugin (and a pool that is up
# and has run jobs): the descriptors it sees must be the same.
write_mk Makefile <<'EOF2'
load @PLUGIN@
X := $(async-try x,true)$(async-wait)
all:
	@$(async-compile b,true)$(async-wait)
	@ls /proc/self/fd | tr '\n' ' '
EOF2
run_make -s -j2
mv out with
printf 'all:\n\t@ls /proc/self/fd | tr "\\n" " "\n' >Makefile
run_make -s -j2
ok "a recipe inherits no descriptor of the plugin's" expect_eq "$(cat out)" "$(cat with)" "descriptors"

# A recipe that exits while make's thread is blocked in the plugin's wait
# (it exits only once the job that wait is for has started): its status
# must still be there for make to reap afterwards; the plugin never calls
# waitpid(-1).
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: fails waits
waits: ; @$(async-compile w,touch started; sleep 0.3)$(async-wait)
fails: ; @i=0; while [ ! -e started ] && [ $$i -lt 200 ]; do sleep 0.05; i=$$((i + 1)); done; exit 3
EOF2
rm -f started
run_make -s -j2
ok "a recipe's exit status stays make's while the plugin waits" \
	sh -c '[ "$0" -eq 2 ] && grep -q "fails.*Error 3" err || { cat err; exit 1; }' "$make_status"

# Every thread but make's own blocks the signals make handles (HUP, INT,
# TERM, CHLD: bits 0, 1, 14, 16 of SigBlk), so make's handlers run on
# make's thread.  The recipe's parent is make.
write_mk Makefile <<'EOF2'
load @PLUGIN@
X := $(async-try x,true)$(async-wait)
all:
	@for t in /proc/$$PPID/task/*; do \
		[ "$${t##*/}" = "$$PPID" ] && continue; \
		m=$$(sed -n 's/^SigBlk:[[:space:]]*//p' $$t/status); \
		echo "thread $${t##*/} blocks $$(( 0x$$m & 0x14003 ))"; \
	done
EOF2
run_make -s
ok "the plugin runs a thread of its own" expect_grep '^thread ' out
ok "which blocks HUP, INT, TERM and CHLD" \
	expect_eq "" "$(grep -v '^thread [0-9]* blocks 81923$' out)" "threads not blocking them"

done_testing
