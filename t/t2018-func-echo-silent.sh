#!/bin/sh
# A build step is echoed as make echoes a recipe line: not under -s, nor
# under a `.SILENT:` without prerequisites, and always under -n.  (A
# line's `@` and a `.SILENT: T` list cannot be seen from a function: see
# asynccompile(7), "Output, echo and make's flags".)
. "$(dirname "$0")/lib.sh"

mk() { # text before the rule
	write_mk Makefile <<EOF2
load @PLUGIN@
$1
all:
	\$(async-compile x,echo hi)\$(async-wait)
EOF2
}

mk ''
run_make
ok "plain: make exits 0" expect_make_ok
ok "plain: the step is echoed" expect_grep '^echo hi$' out
ok "plain: and runs" expect_grep '^hi$' out

run_make -s
ok "-s: the step runs" expect_grep '^hi$' out
ok "-s: it is not echoed" expect_no_grep '^echo hi$' out

mk '.SILENT:'
run_make
ok ".SILENT: make exits 0" expect_make_ok
ok ".SILENT: the step runs" expect_grep '^hi$' out
ok ".SILENT: it is not echoed" expect_no_grep '^echo hi$' out

run_make -n
ok ".SILENT: with -n: make exits 0" expect_make_ok
ok ".SILENT: with -n: echoed, as make prints every line under -n" expect_grep '^echo hi$' out
ok ".SILENT: with -n: not run" expect_no_grep '^hi$' out

done_testing
