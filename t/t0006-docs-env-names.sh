#!/bin/sh
# The variables a user sets are spelled ASYNC_COMPILE_*, one way, in the
# code and in what users read: the environment variables the code reads
# are the ones asynccompile(7) lists under ENVIRONMENT, and the manual
# pages, README, asynccompile.mk and the examples name no variable of
# another spelling for a user to set.
. "$(dirname "$0")/lib.sh"

page=$TEST_ROOT/man/asynccompile.7
cd "$TEST_ROOT" || exit 1

# Read by the code: getenv("ASYNC_COMPILE_X") and the finders and make
# variable lookups that take the name as a string (spawn_find_file,
# request_var).  ASYNC_COMPILE_FAULTS is the fault-injection build's.
grep -rhoE '"ASYNC_COMPILE_[A-Z_]+"' --include='*.c' --include='*.h' \
	lib answer pool plugin worker config cli trace | tr -d '"' | grep -vx ASYNC_COMPILE_FAULTS |
	LC_ALL=C sort -u >"$TRASH/code"
# Listed under ENVIRONMENT: the .B/.BR line after each .TP.
sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$page" |
	awk 'prev == ".TP" { for (i = 2; i <= NF; i++) print $i } { prev = $0 }' |
	tr -d '",' | grep -E '^ASYNC_COMPILE_' | LC_ALL=C sort -u >"$TRASH/page"

ok "the code reads some ASYNC_COMPILE_ variables" test -s "$TRASH/code"
ok "every ASYNC_COMPILE_ variable the code reads is under ENVIRONMENT" \
	expect_eq "" "$(LC_ALL=C comm -23 "$TRASH/code" "$TRASH/page" | tr '\n' ' ')" "undocumented"
ok "ENVIRONMENT lists no ASYNC_COMPILE_ variable the code does not read" \
	expect_eq "" "$(LC_ALL=C comm -13 "$TRASH/code" "$TRASH/page" | tr '\n' ' ')" "unread"

# Other spellings in what users read.  ASYNCCOMPILE_* (no underscore
# after ASYNC) are the plugin's own, set by it and never by a user: the
# page says so (ASYNCCOMPILE alone is the pages' title).  Anything else
# ASYNC_-like that is not ASYNC_COMPILE_ is a second spelling.
others() {
	grep -noE '\bASYNC_?[A-Z][A-Z_]*' man/*.[1-8] README asynccompile.mk \
		asynccompile-kbuild.mk examples/*/Makefile examples/*/*.mk examples/*/*.sh 2>/dev/null |
		grep -vE ':(ASYNC_COMPILE_[A-Z_]+|ASYNCCOMPILE_(HELD_TOKENS|WORKER_PID|TRACE)?|ASYNCCOMPILE)$'
}
ok "what users read names user variables ASYNC_COMPILE_* only" expect_eq "" "$(others)" "other spellings"
ok "asynccompile(7) says the ASYNCCOMPILE_ variables are not the user's" \
	expect_grep '^Set by the plugin, never by users' "$page"

done_testing
