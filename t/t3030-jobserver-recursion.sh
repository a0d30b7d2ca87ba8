#!/bin/sh
# test: per-start-method
# Jobs really run while make goes on; tokens come back as soon as a job
# ends; recursive makes share one jobserver; a sub-make whose jobserver
# descriptors were closed runs one job at a time.
. "$(dirname "$0")/lib.sh"
write_config "workers: 8"

# If async-try blocked until its job ended, the job (a writer on a fifo)
# and $(shell cat) (its reader) would wait for each other forever.
mkfifo fifo
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try w,echo through the fifo >fifo)
got := $(shell cat fifo)
$(async-wait)
$(info got=$(got) status=$(w.status))
all: ; @:
EOF2
TEST_MAKE_TIMEOUT=20 run_make
ok "a queued job runs while make reads on" expect_grep '^got=through the fifo status=0$' out

if [ "$(make_version)" = 4.3 ]; then
	skip "token return timing: needs a fifo jobserver (make 4.4)"
else
	# job 1 (implicit slot) waits until jobs 2-4 (tokens) have ended, then
	# counts the tokens in the jobserver: all three must be back while it
	# still runs, long before the wait (fionread waits for them, bounded:
	# each comes back a moment after its job's file appears).
	write_mk Makefile <<'EOF2'
load @PLUGIN@
FIFO := $(patsubst --jobserver-auth=fifo:%,%,$(filter --jobserver-auth=fifo:%,$(MAKEFLAGS)))
$(async-try long,while [ $$(ls done.* 2>/dev/null | wc -l) -lt 3 ]; do sleep 0.05; done; $(TEST_HELPERDIR)/fionread.py $(FIFO) 3)
$(foreach i,1 2 3,$(async-try short$i,touch done.$i))
$(async-wait)
$(info free-tokens=$(long.out) $(long.err))
all: ; @:
EOF2
	rm -f done.*
	TEST_MAKE_TIMEOUT=20 "$TEST_HELPERDIR/jsbox.py" fifo abc -- "$MAKE_UT" >out 2>err
	ok "tokens are back the moment their jobs end (not at wait)" expect_grep '^free-tokens=3 $' out
fi

# Recursive make: the plugin in the top make and in two sub-makes, all
# on one jobserver.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: sub1 sub2
	$(foreach i,1 2,$(async-compile top$i,SPAN))
	$(async-wait)
sub1 sub2:
	+$(MAKE) -s -f sub.mk TAG=$@
EOF2
sed -i "s|SPAN|$(span_cmd "$TRASH/log" 'top$i' 0.2)|" Makefile
write_mk sub.mk <<'EOF2'
load @PLUGIN@
$(foreach i,1 2 3,$(async-try $(TAG)p$i,SPAN))
$(async-wait)
all:
	$(foreach i,1 2 3,$(async-compile $(TAG)c$i,SPAN))
	$(async-wait)
EOF2
sed -i "s|SPAN|$(span_cmd "$TRASH/log" '$(TAG)$i' 0.2)|" sub.mk
rm -f log; run_make -s -j3
ok "recursive makes sharing a jobserver succeed" expect_make_ok
n=$(max_overlap log)
diag "max overlap, -j3, top make + 2 sub-makes: $n"
# 3 slots, of which the two sub-make processes hold two; a plugin takes
# its make's implicit slot only while that make runs no child.
ok "recursive: concurrency stays within the shared budget" test "$n" -le 3
ok "recursive: every job ran" expect_eq 28 "$(wc -l <log | tr -d ' ')"

# A chain of six makes, each queuing six build steps and then recursing
# while they run (the steps wait at the end).  make runs each sub-make on
# its implicit slot: the plugin of that make must not use the same slot
# meanwhile, or every level runs one job too many (it ran 7 at once under
# -j2, 9 under -j4).  Only a make blocked in its wait with no running
# child lends the slot to the plugin.
write_mk chain.mk <<'EOF2'
load @PLUGIN@
L ?= 1
all: work
	$(async-wait)
work:
	$(foreach i,1 2 3 4 5 6,$(async-compile L$(L).$i,SPAN))
	$(if $(filter-out 6,$(L)),+$(MAKE) -f chain.mk L=$(word $(L),2 3 4 5 6))
EOF2
sed -i "s|SPAN|$(span_cmd "$TRASH/log" 'L$(L).$i' 0.2)|" chain.mk
for j in 2 4; do
	rm -f log; run_make -s -j$j -f chain.mk
	ok "6-level chain, -j$j: succeeds" expect_make_ok
	diag "6-level chain, -j$j: max overlap $(max_overlap log)"
	ok "6-level chain, -j$j: never more than $j jobs at once" expect_overlap_le $j log
	ok "6-level chain, -j$j: all 36 jobs ran" expect_eq 72 "$(wc -l <log | tr -d ' ')"
done

if [ "$(make_version)" = 4.3 ]; then
	# Not marked recursive ('+' or $(MAKE)): make 4.3 closes the
	# jobserver descriptors for this child, which still finds them in
	# MAKEFLAGS.
	write_mk Makefile <<'EOF2'
all: ; @MAKE_UNDER_TEST -s -f sub.mk
EOF2
	sed -i "s|MAKE_UNDER_TEST|$TEST_MAKE|" Makefile
	write_mk sub.mk <<'EOF2'
load @PLUGIN@
$(foreach i,1 2 3,$(async-try p$i,SPAN))
$(async-wait)
$(info results=$(p1.status)$(p2.status)$(p3.status))
$(info $(async-stats))
all: ; @:
EOF2
	sed -i "s|SPAN|$(span_cmd "$TRASH/log" 'p$i' 0.2)|" sub.mk
	rm -f log; run_make -j3
	ok "closed jobserver descriptors: jobs still run" expect_grep '^results=000$' out
	ok "closed jobserver descriptors: one job at a time" expect_eq 1 "$(max_overlap log)"
	ok "closed jobserver descriptors: the plugin's own pipes are not taken for them" \
		expect_grep 'slots=limit' out
	# The pool started only in a recipe, when make no longer uses fds 3
	# and 4: the plugin's own pipes may get those numbers.
	write_config "workers: 8" "warm: false"
	write_mk sub.mk <<'EOF2'
load @PLUGIN@
all:
	$(foreach i,1 2 3,$(async-try r$i,SPAN))
	$(async-wait)
	@echo '$(async-stats)'
EOF2
	sed -i "s|SPAN|$(span_cmd "$TRASH/log" 'r$i' 0.2)|" sub.mk
	rm -f log; run_make -j3
	ok "closed jobserver descriptors, pool started in a recipe: not mistaken for the plugin's pipes" \
		expect_grep 'max_running=1 .*slots=limit' out
	write_config "workers: 8"
	ok "closed jobserver descriptors: the plugin says why" expect_grep 'asynccompile: .*jobserver descriptors [0-9]*,[0-9]* are not' err
else
	for i in 1 2 3 4 5; do
		skip "closed descriptors: make $(make_version) passes the fifo path instead"
	done
fi

done_testing
