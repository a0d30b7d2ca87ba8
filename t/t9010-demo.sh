#!/bin/sh
# examples/demo: the program `make demo` builds, in a scratch copy so the
# tree stays clean.
. "$(dirname "$0")/lib.sh"

command -v cc >/dev/null 2>&1 || skip_all "no C compiler (cc)"

demo_copy() {
	rm -rf demo
	cp -R "$TEST_ROOT/examples/demo" demo
	rm -f demo/*.o demo/wordstat
}
run_demo() { # [make args...]
	run_make -C demo ASYNC_COMPILE_PLUGIN="$ASYNC_PLUGIN" ASYNC_COMPILE_MK="$TEST_ROOT/asynccompile.mk" "$@"
}
stat_of() { # key: its value in the last "asynccompile: ..." stats line
	sed -n 's/^asynccompile: .*/&/p' out | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"
}
compiles() { # how many compile commands make echoed
	grep -c -- ' -c [a-z]*\.c -o [a-z]*\.o$' out
}

demo_copy
run_demo
ok "the demo builds and runs" expect_make_ok
ok "the program's report" sh -c 'grep -qx "sample.txt: 10 lines, 108 words, 537 bytes, longest word 8 letters" out &&
	grep -qx "top 5 words: the(11) a(7) and(4) that(4) job(3)" out || { cat out; exit 1; }'
ok "the probes were answered by one wait" expect_grep '^asynccompile demo: 12 probes, answered by one wait$' out
ok "a rejected flag falls back" expect_grep 'no (so the fallback: -fno-common)$' out
ok "probe results reach the compile commands" \
	expect_grep '^cc -std=c11 -O2 -g -Wall .*-fno-common -Wno-unused-parameter .* -c main.c -o main.o$' out
ok "all four sources compiled" expect_eq 4 "$(compiles)" "compile commands"
ok "the program is linked with the probed ld flags" \
	expect_grep '-Wl,--as-needed -Wl,--build-id -o wordstat main.o count.o freq.o report.o$' out
ok "the stats line counts 12 probes and 4 compiles" \
	expect_grep '^asynccompile: submitted=16 completed=16 .* running=0 queued=0 ' out
ok "exactly the rejected probe failed" expect_eq 1 "$(stat_of failed)" "failed jobs"
if [ "$(nproc)" -ge 2 ]; then
	ok "compiles ran side by side" sh -c '[ "$0" -ge 2 ] || { echo "max_running=$0"; exit 1; }' "$(stat_of max_running)"
else
	skip "one CPU: nothing runs side by side"
fi
ok "the objects are there" test -f demo/main.o -a -f demo/count.o -a -f demo/freq.o \
	-a -f demo/report.o -a -x demo/wordstat

run_demo
ok "a second run compiles nothing" expect_eq 0 "$(compiles)" "compile commands"
ok "a second run only probes" expect_eq 12 "$(stat_of submitted)" "jobs"

touch demo/wordstat.h
run_demo -s
ok "after a header change the one recipe rebuilds every object" expect_eq 16 "$(stat_of submitted)" "jobs"
ok "-s: no command echo" expect_eq 0 "$(grep -c -- ' -c ' out)" "echoed commands"

run_demo clean
ok "make clean runs no probe" expect_no_grep 'probes' out
ok "make clean cleans" test ! -e demo/main.o -a ! -e demo/wordstat

# What `make demo` at the top does: a sub-make with --no-print-directory
# -C; with and without a jobserver from the parent.
cat >Makefile <<EOF
.PHONY: demo-top
demo-top:
	\$(MAKE) --no-print-directory -C demo ASYNC_COMPILE_PLUGIN=$ASYNC_PLUGIN ASYNC_COMPILE_MK=$TEST_ROOT/asynccompile.mk
EOF
run_make
ok "as a sub-make" expect_make_ok
ok "as a sub-make it builds and runs" expect_grep '^top 5 words: the(11)' out
ok "the sub-make made its own jobserver" expect_eq jobserver "$(stat_of slots | cut -d- -f1)" "slots"
run_demo clean
run_make -j2
ok "as a sub-make of make -j2" expect_make_ok
ok "the parent's jobserver is used, not overridden" sh -c '! grep -i "jobserver\|-j.*forced" err || exit 1'
ok "sub-make of make -j2 builds and runs" expect_grep '^top 5 words: the(11)' out

# STOCK=1: the same program without the plugin, as `make demo` times it.
demo_copy
run_demo STOCK=1
ok "STOCK=1 builds and runs" expect_make_ok
ok "STOCK=1: the same report" expect_grep '^top 5 words: the(11) a(7) and(4) that(4) job(3)$' out
ok "STOCK=1: the same probe answers reach the compiles" \
	expect_grep '^cc -std=c11 -O2 -g -Wall .*-fno-common -Wno-unused-parameter .* -c main.c -o main.o$' out
ok "STOCK=1: the plugin is not loaded" expect_no_grep '^asynccompile' out

# `make demo`'s table: the two clean builds timed side by side.  Its
# shape only, never the timings.
ok "make demo prints the table" sh -c \
	'sed -n "/^demo:/,/^\$/p" "$0/Makefile" | grep -q "examples/demo/compare.sh \"\$(MAKE)\""' "$TEST_ROOT"
table_status=0
timeout 120 sh "$TEST_ROOT/examples/demo/compare.sh" "$MAKE_UT" "$ASYNC_PLUGIN" >table 2>table.err || table_status=$?
ok "compare.sh exits 0" expect_eq 0 "$table_status" "exit status ($(cat table.err))"
ok "the table has a title, a header and one row" expect_eq 3 "$(wc -l <table)" "lines"
ok "the title says what was timed" \
	expect_grep '^asynccompile demo: a clean build of wordstat (12 probes, 4 compiles, link)$' table
ok "the header names stock make, asynccompile and the ratio" \
	expect_grep '^ *stock make  *asynccompile  *ratio$' table
ok "the row: two times in seconds and their ratio" \
	expect_grep '^  build time  *[0-9][0-9]*\.[0-9][0-9] s  *[0-9][0-9]*\.[0-9][0-9] s  *[0-9][0-9]*\.[0-9][0-9]x$' table
# (the times are shown rounded to 0.01 s, the ratio is of the unrounded
# ones: allow what the rounding of each can move it by)
ok "the ratio is stock over asynccompile" awk '
	NR == 3 { s = $3; p = $5; r = $7; sub(/x$/, "", r)
		if (p < 0.01 || s < 0.01) exit 0
		d = s / p - r; if (d < 0) d = -d
		tol = r * (0.005 / s + 0.005 / p) * 1.01 + 0.005
		if (d > tol) { printf "%s / %s is not %s\n", s, p, r; exit 1 } }' table

# A compile error fails the one recipe and names the job.
demo_copy
echo 'int broken(void) { return }' >>demo/freq.c
run_demo
ok "a compile error fails the build" expect_eq 2 "$make_status" "exit status"
ok "the failure names the object" expect_grep 'freq.o (status 1)' err
ok "the compiler's message is shown" expect_grep 'freq.c:.*error' err
ok "nothing is linked" test ! -e demo/wordstat
ok "no jobserver token message" expect_no_grep INTERNAL err

done_testing
