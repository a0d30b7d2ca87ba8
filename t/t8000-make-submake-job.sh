#!/bin/sh
# test: per-start-method
# A build step is run in place of a recipe line, so it gets what make
# gives a recipe line: MAKEFLAGS (command-line variables included),
# MFLAGS and MAKELEVEL one up; a sub-make run as a build step joins the
# jobserver and runs in parallel; under -n it still runs, as make runs a
# line naming $(MAKE).
. "$(dirname "$0")/lib.sh"
mkdir sub
write_mk Makefile <<'EOF2'
load @PLUGIN@
all:
	$(async-compile sub,$(MAKE) -C sub)
	$(async-wait)
env:
	$(async-compile e,echo "level=$$MAKELEVEL flags=$$MAKEFLAGS")
	$(async-wait)
EOF2
{
	echo 'all: t1 t2 t3'
	for i in 1 2 3; do
		printf 't%d:\n\t@echo "$@ CC=$(CC) level=$(MAKELEVEL) flags=$(MAKEFLAGS)"; %s\n' \
			"$i" "$(barrier_cmd "$TRASH/log" "$TRASH/bar" 3 "t$i")"
	done
} >sub/Makefile
fresh() { rm -rf log bar bar.timeout; mkdir bar; }

fresh; run_make -j4 -k CC=clang
ok "a sub-make as a build step: make exits 0" expect_make_ok
ok "... it sees the command line's variables" expect_grep '^t1 CC=clang ' out
ok "... and -k" expect_grep '^t1 .*flags=k' out
ok "... and runs one level down" expect_grep '^t1 .*level=1 ' out
ok "... and says make[1]:" expect_grep "make\[1\]: Entering directory" out
ok "... and joins the jobserver: its three targets run at once" \
	sh -c '[ ! -e bar.timeout ]'
ok "... never more than -j4" expect_overlap_le 4 log
ok "... without a jobserver warning" expect_no_grep 'jobserver unavailable\|warning: jobserver' err

fresh; run_make -n -j4
ok "make -n: exits 0" expect_make_ok
ok "make -n: the sub-make runs, as make runs a line naming \$(MAKE)" \
	expect_grep '^make\[1\]: Entering directory' out
ok "make -n: the sub-make itself only prints its recipes" expect_grep '^echo "t1 ' out
ok "make -n: ... and runs none of them" test ! -s log

run_make -s FOO=1 env
ok "a plain build step: make exits 0" expect_make_ok
ok "a plain build step gets MAKELEVEL and MAKEFLAGS as a recipe line would" \
	expect_grep '^level=1 flags=s -- FOO=1$' out

done_testing
