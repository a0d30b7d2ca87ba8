#!/bin/sh
# A failed build step fails its target wherever $(async-wait) sits on the
# recipe line, not only when it begins it.
. "$(dirname "$0")/lib.sh"

# placement TARGET-RECIPE-LINE: a target whose recipe queues one failing
# build step (status 4) and waits for it on that line.
placement() { # name line
	write_mk Makefile <<EOF2
load @PLUGIN@
$1:
	\$(async-compile b1,exit 4)
	$2
EOF2
	rm -f ./@exit 4 d.out
	run_make "$1"
}
failed() { # name [broken]: make failed, said so for the target, made no stray files
	[ "$make_status" -ne 0 ] || { echo "make exited 0"; cat out err; return 1; }
	expect_grep "\*\*\* \[Makefile:[0-9]*: $1\] Error" err &&
	# a broken command before the wait's own line fails first: the
	# collector line after it never runs, as any later line of a recipe
	{ [ -n "${2:-}" ] || expect_grep "b1 (status 4): exit 4" err; } &&
	expect_no_grep INTERNAL err &&
	{ [ ! -e ./@exit ] && [ ! -e 4 ] || { echo "stray files:"; ls; return 1; }; }
}

placement start '$(async-wait)'
ok "at the start of the line: Error 4" failed start
ok "at the start of the line: the status is the job's" expect_grep 'start\] Error 4$' err

placement args 'touch d.out $(async-wait)'
ok "after a command's arguments: the target fails" failed args

placement quoted '@echo "x $(async-wait)"'
ok "inside double quotes: the target fails" failed quoted broken

placement orelse 'true || $(async-wait)'
ok "after ||: the target fails" failed orelse broken

placement before '$(async-wait) echo after'
ok "followed by more text: the target fails" failed before
ok "followed by more text: that text does not run" expect_no_grep '^after$' out

placement escaped 'echo x\$(async-wait)'
ok "after a backslash: the target fails" failed escaped

# -k, -i and .DELETE_ON_ERROR treat a failed build step as any failed
# recipe line, wherever its wait sits: on a line of its own, inside a
# command, or on the build step's own line (there under -j2 too).
delete_on_error() { # label make-flags recipe-line...
	label=$1 flags=$2
	shift 2
	{
		printf 'load @PLUGIN@\n.DELETE_ON_ERROR:\nall: bad good\nbad:\n'
		printf '\t%s\n' "$@"
		printf 'good: ; @touch $@\n'
	} | write_mk Makefile
	rm -f bad good
	run_make -k $flags
	ok "$label, -k: the failing target fails, make goes on" \
		sh -c '[ "$0" -eq 2 ] && grep -q "bad\] Error 4" err && [ -e good ]' "$make_status"
	ok "$label: the failure names the job" expect_grep 'b1 (status 4): exit 4' err
	ok "$label, .DELETE_ON_ERROR: the half-made target is deleted" \
		sh -c 'grep -q "Deleting file .bad." err && [ ! -e bad ]'
	ok "$label: no jobserver token message" expect_no_grep INTERNAL err
	rm -f bad good
	run_make -i $flags
	ok "$label, -i: the failure is ignored" expect_make_ok
	ok "$label, -i: make says it ignored it, the other target is made" \
		sh -c 'grep -q "Error 4 (ignored)" err && [ -e good ]'
}
delete_on_error "a wait line of its own" "" 'touch $@' '$(async-compile b1,exit 4)' '$(async-wait b1)'
delete_on_error "a wait inside a command" "" '$(async-compile b1,exit 4)' 'touch $@ $(async-wait)'
delete_on_error "a wait on the build step's line" "-j2" 'touch $@' '$(async-compile b1,exit 4)$(async-wait)'

done_testing
