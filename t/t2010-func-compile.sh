#!/bin/sh
# test: per-start-method
# async-compile: output replay, failures at parse time and in recipes,
# echo, -s, -n (-k, -i and .DELETE_ON_ERROR: t2015).
. "$(dirname "$0")/lib.sh"

write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-compile one,echo out-one; echo err-one >&2)
$(async-compile two,echo out-two)
$(async-wait)
$(info after=$(one.status)$(two.status)[$(one.out)][$(one.err)])
all: ; @:
EOF2
run_make
ok "parse-time build steps succeed" expect_make_ok
ok "build step output is replayed in queue order" \
	expect_eq "out-one out-two after=00[out-one][err-one]" "$(tr '\n' ' ' <out | sed 's/ $//')"
ok "build step stderr goes to stderr" expect_eq "err-one" "$(cat err)"

write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-compile good,true)
$(async-compile broken.o,echo compiling; exit 3)
$(async-compile worse.o,exit 4)
$(async-wait)
$(info not reached)
all: ; @:
EOF2
run_make
ok "a failed build step stops make at parse time" expect_eq 2 "$make_status" "exit status"
ok "the error names the job, its status and its command" \
	expect_grep "broken.o (status 3): echo compiling; exit 3" err
ok "every failed job is named" expect_grep "worse.o (status 4): exit 4" err
ok "the error has the makefile location" expect_grep "^Makefile:5: \*\*\* async-wait: 2 build steps failed" err
ok "nothing after the failing wait ran" expect_no_grep "not reached" out

write_mk Makefile <<'EOF2'
load @PLUGIN@
all: a.o b.o
a.o b.o:
	$(async-compile $@,echo compiling $@ >$@.log; touch $@)
	$(async-wait $@)
EOF2
run_make
ok "recipe build steps run" expect_make_ok
ok "build steps are echoed when queued" expect_grep '^echo compiling a.o >a.o.log; touch a.o$' out
ok "the recipe's job really ran" test -f a.o -a -f b.o.log
rm -f a.o b.o
run_make -s
ok "-s silences the echo" expect_eq "" "$(cat out)"
rm -f a.o b.o *.log
run_make -n
ok "-n echoes build steps" expect_grep '^echo compiling a.o' out
ok "-n runs no build step" test ! -e a.o -a ! -e a.o.log
run_make -q
ok "-q prints nothing and says out of date" sh -c '[ "$0" -eq 1 ] && [ ! -s out ]' "$make_status"
ok "-q runs no build step" test ! -e a.o -a ! -e a.o.log

write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try a,true)
x := $(async-wait)
y := $(async-stats)
$(info stats=$(y))
all: ; @:
EOF2
run_make
ok "\$(async-wait) and \$(async-stats) work as written" expect_grep '^stats=submitted=1 completed=1 failed=0' out

done_testing
