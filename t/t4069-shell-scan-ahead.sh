#!/bin/sh
# The runner judges the code a traced command maps while the command
# still runs (lib/run.c, run_peek; lib/syscan.h): the first scan of a
# large object (cc1 about 50 ms on the bench's VM, libLLVM 110 ms) then
# overlaps the command instead of following its exit.
#
# The command here waits, bounded, for the store's scan directory to gain
# an entry after it ran a program nothing has scanned before (a copy of
# true made for this test).  A runner that scans only after the exit
# gives it none in time: the loop runs out and the answer says so.  The
# wait is on a file the runner writes, never on a sleep's length.
. "$(dirname "$0")/lib.sh"

S=$XDG_CACHE_HOME/asynccompile/syscan
cp /bin/true fresh-true # a new identity: never scanned

write_config "workers: 2"
# 1. A first make creates the store (its scans stay in memory: there was
# no store to keep them in while it ran).
write_mk Makefile <<EOF
load @PLUGIN@
X := \$(async-shell ls / | wc -l; sleep 0)
\$(info X=\$(X))
all: ; @:
EOF
run_make
ok "a first make creates the store" expect_make_ok
ok "... and the store" test -d "$XDG_CACHE_HOME/asynccompile"

# 2. No record: nothing of make 1 is speculated, whose scans would land
# in the store while the command waits.
rm -f "$XDG_CACHE_HOME"/asynccompile/rec-*
# The wait: up to 3000 rounds of 10 ms for one more entry (of the
# copy, or of any program the command ran: none was kept before).
cat >wait.sh <<EOF
c=\$(ls '$S' 2>/dev/null | wc -l)
./fresh-true
n=0
while [ "\$(ls '$S' 2>/dev/null | wc -l)" -le "\$c" ] && [ \$n -lt 3000 ]; do
	sleep 0.01
	n=\$((n + 1))
done
[ \$n -lt 3000 ] && echo seen || echo "not seen"
EOF
write_mk Makefile <<EOF
load @PLUGIN@
Y := \$(async-shell sh ./wait.sh)
\$(info Y=\$(Y))
all: ; @:
EOF
run_make
ok "make succeeds" expect_make_ok
ok "the program was judged while the command still ran" expect_grep '^Y=seen$' out
ok "... and the verdict is kept: the store holds it after make" \
	sh -c "[ \$(ls '$S' | wc -l) -ge 2 ]"

done_testing
