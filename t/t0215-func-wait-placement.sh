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

# -k, -i and .DELETE_ON_ERROR keep working for a wait inside a command.
write_mk Makefile <<'EOF2'
load @PLUGIN@
.DELETE_ON_ERROR:
all: bad other
bad:
	$(async-compile b1,exit 4)
	touch $@ $(async-wait)
other:
	touch $@
EOF2
rm -f bad other
run_make -k
ok "-k: the failing target fails, make goes on" \
	sh -c '[ "$0" -eq 2 ] && grep -q "bad\] Error 4" err && [ -e other ]' "$make_status"
ok ".DELETE_ON_ERROR: the half-made target is deleted" \
	sh -c 'grep -q "Deleting file .bad." err && [ ! -e bad ]'
rm -f bad other
run_make -i
ok "-i: the failure is ignored" expect_make_ok
ok "-i: make says it ignored it" expect_grep 'Error 4 (ignored)' err

done_testing
