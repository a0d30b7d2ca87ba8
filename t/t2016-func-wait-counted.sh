#!/bin/sh
# Build steps are work make counts: a recipe whose lines expand to nothing
# but build steps and a wait must not end with "'T' is up to date" or
# "Nothing to be done for 'T'", and -q and -n keep their meaning.
. "$(dirname "$0")/lib.sh"

write_mk Makefile <<'EOF2'
load @PLUGIN@
.PHONY: all idle
prog:
	$(async-compile s1,echo made >prog)
	$(async-wait)
all:
	$(async-compile s2,echo made >all.out)$(async-wait)
idle:
	$(async-wait)
EOF2

run_make prog
ok "a file target built by a build step: make exits 0" expect_make_ok
ok "a file target built by a build step: the step ran" expect_grep '^made$' prog
ok "a file target built by a build step: not called up to date" \
	expect_no_grep "up to date\|Nothing to be done" err
ok "... nor on stdout" expect_no_grep "up to date\|Nothing to be done" out

run_make all
ok "a phony target made of a build step: make exits 0" expect_make_ok
ok "a phony target made of a build step: the step ran" expect_grep '^made$' all.out
ok "a phony target made of a build step: no 'Nothing to be done'" \
	expect_no_grep "up to date\|Nothing to be done" out

# No build step, no work: the message stays, as for any empty recipe.
run_make idle
ok "a wait with nothing to wait for: make exits 0" expect_make_ok
ok "a wait with nothing to wait for: 'Nothing to be done', as stock make says" \
	expect_grep "Nothing to be done for 'idle'" out

run_make prog
ok "the file is up to date now: make says so" expect_grep "'prog' is up to date" out

rm -f prog
run_make -q prog
ok "-q with the step to do: make exits 1" expect_eq 1 "$make_status" "make -q status"
ok "-q: the step does not run" test ! -e prog

run_make -n prog
ok "-n: make exits 0" expect_make_ok
ok "-n: the step is echoed" expect_grep '^echo made >prog$' out
ok "-n: the step does not run" test ! -e prog
ok "-n: not called up to date" expect_no_grep "up to date\|Nothing to be done" out

done_testing
