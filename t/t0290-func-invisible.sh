#!/bin/sh
# make --warn-undefined-variables: the plugin never expands a variable the
# makefile did not define (ASYNC_COMPILE_CONFIG, or $@ outside a recipe),
# so the only warnings are about the makefile's own references.
. "$(dirname "$0")/lib.sh"
# the configuration comes from ./asynccompile.yaml: the variable is not
# defined anywhere, not even in the environment
unset ASYNC_COMPILE_CONFIG
printf 'start_method: %s\n' "${TEST_START_METHOD:-subprocess}" >asynccompile.yaml

# undefined_warnings: the warnings in ./err, one per line, sorted
undefined_warnings() { grep 'undefined variable' err | sort; }

write_mk Makefile <<'EOF2'
load @PLUGIN@
all: ; @:
EOF2
run_make --warn-undefined-variables
ok "load alone: no warning" expect_eq "" "$(undefined_warnings)" "warnings"
ok "load alone: make is fine" expect_make_ok

# Every function, at parse time and in recipes, with a failing build step
# (the wait then looks at $@); one reference of the makefile's own shows
# the warnings are on.
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try p1,echo one)
$(async-try p2,echo two)
$(async-wait p1)
$(async-wait)
$(info p=$(p1.out)$(p2.out) $(word 1,$(async-stats)))
$(info own=$(NOT_DEFINED_BY_ANYONE))
all: good bad
good: ; @$(async-compile g,echo built)$(async-wait)
bad: ; @$(async-compile b,exit 3)$(async-wait)
EOF2
run_make --warn-undefined-variables -k -j2
ok "every function: make ran them" expect_grep '^p=onetwo submitted=2$' out
ok "every function: the failed step fails make" expect_eq 2 "$make_status" "make's exit status"
ok "every function: the only warning is the makefile's own" \
	expect_eq "Makefile:7: warning: undefined variable 'NOT_DEFINED_BY_ANYONE'" \
	"$(undefined_warnings)" "warnings"

# The make variable still selects the configuration when it is defined.
printf 'start_method: %s\nworkers: 3\n' "${TEST_START_METHOD:-subprocess}" >var.yaml
write_mk Makefile <<'EOF2'
load @PLUGIN@
ASYNC_COMPILE_CONFIG := var.yaml
$(async-try x,true)$(async-wait)
$(info $(async-stats))
all: ; @:
EOF2
run_make --warn-undefined-variables
ok "a defined ASYNC_COMPILE_CONFIG still applies" expect_grep 'workers=3 .*config=var.yaml' out
ok "a defined ASYNC_COMPILE_CONFIG: no warning" expect_eq "" "$(undefined_warnings)" "warnings"

done_testing
