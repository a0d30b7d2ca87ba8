#!/bin/sh
# `$(async-wait)` is a variable reference for make; the plugin defines the
# variable to call the function.  A makefile that gives the variable a
# value of its own gets a warning that explains the failure that follows.
. "$(dirname "$0")/lib.sh"

# step_mk DEFINITION WAIT: a makefile with DEFINITION (may be empty) whose
# recipe queues one step and waits for it with WAIT.
step_mk() {
	printf 'load %s\n%s\nall:\n\t$(async-compile s1,echo step)\n\t%s\n' \
		"$ASYNC_PLUGIN" "$1" "$2" >Makefile
}

step_mk 'async-wait := x' '$(async-wait)'
run_make
ok "a recipe line running the variable's value: make fails" test "$make_status" -ne 0
ok "the warning names the variable and the cure" \
	expect_grep "warning: a makefile gave the variable 'async-wait' a value of its own.*\$(async-wait ) with a blank" err

write_mk Makefile <<'EOF2'
load @PLUGIN@
async-stats = mine
$(info stats=$(async-stats))
all: ; @:
EOF2
run_make
ok "async-stats redefined: make still runs" expect_make_ok
ok "async-stats redefined: the makefile's value is used" expect_grep '^stats=mine$' out
ok "async-stats redefined: warned about" expect_grep "the variable 'async-stats'" err

# The cure works, and an untouched makefile gets no warning.
step_mk 'async-wait := x' '$(async-wait )'
run_make
ok "\$(async-wait ) with a blank still calls the function" expect_make_ok
ok "... and collects the step" expect_grep '^step$' out

step_mk '' '$(async-wait)'
run_make
ok "no redefinition: make exits 0" expect_make_ok
ok "no redefinition: no warning" expect_no_grep "warning" err

done_testing
