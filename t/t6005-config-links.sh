#!/bin/sh
# A configuration file that is a dangling symbolic link or a loop of them
# is an error, whether make finds it as ./asynccompile.yaml or is told
# its name through ASYNC_COMPILE_CONFIG: never a silent fall back to the
# built-in defaults.
. "$(dirname "$0")/lib.sh"
unset ASYNC_COMPILE_CONFIG
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try x,true)
$(async-wait)
all: ; @echo status=$(x.status)
EOF2

link_case() { # what, how the link is made
	rm -f asynccompile.yaml
	eval "$2"
	run_make
	ok "./asynccompile.yaml $1: make fails" test "$make_status" -eq 2
	ok "./asynccompile.yaml $1: the error names the file and the cause" \
		expect_grep "async-try: asynccompile.yaml: cannot open: $3" err
	ASYNC_COMPILE_CONFIG=asynccompile.yaml run_make
	ok "ASYNC_COMPILE_CONFIG naming it: the same error" \
		expect_grep "async-try: asynccompile.yaml: cannot open: $3" err
}
link_case "a dangling link" "ln -s nowhere.yaml asynccompile.yaml" "No such file or directory"
link_case "a link to itself" "ln -s asynccompile.yaml asynccompile.yaml" "Too many levels of symbolic links"
link_case "a loop of two links" "ln -s loop.yaml asynccompile.yaml; ln -sf asynccompile.yaml loop.yaml" \
	"Too many levels of symbolic links"

# A link to a real file is followed, and no file at all means the defaults.
rm -f asynccompile.yaml loop.yaml
printf 'start_method: %s\n' "${TEST_START_METHOD:-subprocess}" >real.yaml
ln -s real.yaml asynccompile.yaml
run_make
ok "a link to a real file: make exits 0" expect_make_ok
ok "a link to a real file: the job ran" expect_grep '^status=0$' out
rm -f asynccompile.yaml
run_make
ok "no file: the defaults, make exits 0" expect_make_ok

done_testing
