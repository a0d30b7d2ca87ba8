#!/bin/sh
# What loading the plugin changes for a makefile, and nothing more (asynccompile(7),
# "WHAT LOADING THE PLUGIN ADDS"): two variables, the object in .LOADED, a
# variable in make's process environment that recipes do not see.  Under
# make --warn-undefined-variables the plugin never expands a variable the
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

# Loaded from the command line, before any makefile is read: then even
# MAKEFILE_LIST is undefined.
printf 'all: ; @:\n' >Makefile
run_make --warn-undefined-variables "--eval=load $ASYNC_PLUGIN"
ok "load by --eval: no warning" expect_eq "" "$(undefined_warnings)" "warnings"
ok "load by --eval: make is fine" expect_make_ok

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

# The same makefile with and without the load.
cat >body.mk <<'EOF2'
$(info vars: $(sort $(.VARIABLES)))
$(info loaded: $(.LOADED))
$(info shell: $(sort $(shell env)))
all: ; @env | sort
EOF2
{ echo 'load @PLUGIN@'; cat body.mk; } | write_mk Makefile
run_make
mv out with
ok "loaded: make is fine" expect_make_ok
cp body.mk Makefile
run_make
mv out without
words() { sed -n "s/^$1: //p" "$2" | tr ' ' '\n' | sort; }
ok "the variables added are async-stats and async-wait, none removed" \
	expect_eq "async-stats async-wait" \
	"$(words vars without >a; words vars with >b; diff a b | sed -n 's/^[<>] //p' | tr '\n' ' ' | sed 's/ $//')" \
	"variables that differ"
ok ".LOADED names the object" expect_eq "loaded: $ASYNC_PLUGIN" "$(grep '^loaded:' with)" ".LOADED"
ok "a recipe's environment is the same" \
	expect_eq "$(grep -v '^[a-z]*:' without)" "$(grep -v '^[a-z]*:' with)" "environment"
# A make that queues nothing starts no pool, so nothing is put into its
# environment either.
ok "\$(shell)'s environment: the same" expect_eq "" \
	"$(words shell without >a; words shell with >b; diff a b | sed -n 's/^[<>] //p' | sed 's/=.*//')" \
	"variables that differ"

# Once a pool has started: make 4.3's $(shell) runs with make's process
# environment, 4.4's with the variables make exports.
{ echo 'load @PLUGIN@'; echo '$(async-try x,true)$(async-wait)'; cat body.mk; } | write_mk Makefile
run_make
mv out with
case $(make_version) in
4.3*) expect_shell=ASYNCCOMPILE_HELD_TOKENS ;;
*) expect_shell= ;;
esac
ok "after a job, \$(shell)'s environment: ${expect_shell:-the same}" expect_eq "$expect_shell" \
	"$(words shell without >a; words shell with >b; diff a b | sed -n 's/^[<>] //p' | sed 's/=.*//')" \
	"variables that differ"
ok "after a job, a recipe's environment is the same" \
	expect_eq "$(grep -v '^[a-z]*:' without)" "$(grep -v '^[a-z]*:' with)" "environment"

done_testing
