#!/bin/sh
# Inside a recipe, $(async-wait) is a command line of its own: make runs
# other targets while it waits, its output lands in the target's -O block
# in recipe order, it fails with the first failed step's status, and
# make's flags (-k, -i, -n, -q, -t, -s) treat it as any recipe line.
. "$(dirname "$0")/lib.sh"

# 1. The wait does not stall make.  A's step can only end once B's recipe
# has run (B writes the fifo the step reads): a wait that blocked make's
# thread would keep B from starting, and the step would give up after
# 20 s (the failure path, not a timing).
mkfifo go
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: A B
A: ; @$(async-compile a,timeout 20 cat go || echo step-gave-up)$(async-wait)
B: ; @timeout 20 sh -c 'echo from-B >go'
EOF2
run_make -j2
ok "stall: make exits 0" expect_make_ok
ok "stall: B ran while A waited (the step read B's line)" expect_grep '^from-B$' out
ok "stall: the step did not give up" expect_no_grep '^step-gave-up$' out

# 2. -O keeps the wait's output in the target's block, in recipe order,
# whatever other targets print meanwhile.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: A B
A:
	@echo A-begin
	@$(async-compile s,echo A-step; echo A-step-err >&2)$(async-wait s)
	@echo A-end
B: ; @echo B-line
EOF2
run_make -j2 -O -s
ok "-O: make exits 0" expect_make_ok
ok "-O: A's lines in recipe order, in one block" \
	expect_eq "A-begin A-step A-end" "$(grep '^A-' out | tr '\n' ' ' | sed 's/ $//')" "A's block"
ok "-O: the block is not split by B" \
	sh -c 'grep -v "^B-line$" out | grep -n "" | grep -q "^[0-9]*:A-begin$" &&
		[ "$(grep -A2 "^A-begin$" out | tr "\n" " ")" = "A-begin A-step A-end " ] ||
		{ cat out; exit 1; }'
ok "-O: the step's stderr text is on stderr" expect_grep '^A-step-err$' err

# 3. The first failed step in queue order gives the status, whichever
# ended first (f2 ends before f1 can), and every failure is listed.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	@$(async-compile f1,i=0; while [ ! -e f2.done ] && [ $$i -lt 400 ]; do sleep 0.05; i=$$((i+1)); done; exit 3)
	@$(async-compile f2,touch f2.done; exit 4)
	@$(async-compile f3,true)
	$(async-wait)
	@echo not-reached
EOF2
rm -f f2.done
run_make -j3 -s
ok "status: make exits 2" expect_eq 2 "$make_status" "make status"
ok "status: the first failure in queue order, Error 3" expect_grep '\*\*\* \[Makefile:6: all\] Error 3$' err
ok "status: both failures listed, in queue order" \
	sh -c 'grep -A2 "2 build steps failed:" err | tr "\n" " " |
		grep -q "f1 (status 3).* f2 (status 4)" || { cat err; exit 1; }'
ok "status: the recipe stops at the wait" expect_no_grep not-reached out

# 4. -k, -i and .DELETE_ON_ERROR: t2015, for every placement of the wait.

# Under .ONESHELL the recipe is one script: the failing wait ends it.
write_mk Makefile <<'EOF2'
load @PLUGIN@
.ONESHELL:
all:
	@$(async-compile f,exit 6)$(async-wait)
	echo after-the-wait
EOF2
run_make
ok ".ONESHELL: Error 6 for the target" expect_grep 'all\] Error 6$' err
ok ".ONESHELL: the script stops at the wait" expect_no_grep '^after-the-wait$' out

# 5. Steps another target queued: a wait names them and prints their
# output in its own target's place.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: W
Q: ; @$(async-compile q1,echo q1-out)
W: Q
	@echo W-begin
	@$(async-wait q1)
	@echo W-end
EOF2
run_make -j2 -O
ok "another target's steps: make exits 0" expect_make_ok
ok "another target's steps: their output where W waits" \
	expect_eq "W-begin q1-out W-end" "$(grep -v '^echo' out | tr '\n' ' ' | sed 's/ $//')" "output"

# 6. make's flags.
write_mk Makefile <<'EOF2'
load @PLUGIN@
out.txt:
	$(async-compile s,echo made >out.txt)
	$(async-wait)
EOF2
rm -f out.txt
run_make
ok "plain: make exits 0" expect_make_ok
ok "plain: the collector line is not echoed" expect_no_grep ' --collect ' out
ok "plain: the step ran" test -e out.txt
rm -f out.txt
run_make -s
ok "-s: nothing is printed" expect_eq "" "$(cat out)" "stdout"
rm -f out.txt
run_make -n
ok "-n: make exits 0" expect_make_ok
ok "-n: the wait's line is echoed" expect_grep ' --collect [^ ]* [0-9]*:[0-9a-f]* ' out
ok "-n: nothing runs" test ! -e out.txt
run_make -q
ok "-q: make exits 1 (out of date)" expect_eq 1 "$make_status" "make status"
ok "-q: nothing runs" test ! -e out.txt
ok "-q: nothing printed" expect_eq "" "$(cat out)" "stdout"
run_make -t
ok "-t: make exits 0" expect_make_ok
ok "-t: the target is touched, not built" sh -c '[ -e out.txt ] && [ ! -s out.txt ]'
rm -f out.txt

# A recursive step runs under -n, and so does its wait (a `+` line): the
# sub-make's -n output comes through the collector.
mkdir -p sub
printf 'all: ; touch sub.out\n' >sub/Makefile
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	$(async-compile sub,$(MAKE) -C sub)
	$(async-wait)
EOF2
run_make -n
ok "-n, recursive step: make exits 0" expect_make_ok
ok "-n, recursive step: the sub-make ran with -n" expect_grep '^touch sub.out$' out
ok "-n, recursive step: nothing was made" test ! -e sub/sub.out

done_testing
