#!/bin/sh
# Reads the tracer cannot see (issue 29, item 5): a process whose code
# enters the kernel other than through the C library is opaque, so its
# answer is never memoized, speculated or cached.  Each case runs the
# same makefiles with $(shell) ("sh") and $(async-shell) ("as"), changes
# the file the command reads between calls or runs, and compares.
#   rawread FILE: a dynamically linked program with its own `syscall`
#     instructions (lib/syscan.c finds them in its executable);
#   jitread MODE FILE: the same reads by code made at run time (mmap
#     PROT_EXEC, or mprotect), and a file mapped shared and writable
#     (trace/hooks_mem.c);
#   goread FILE: a cgo program reading with os.ReadFile, ending through
#     the C library's exit (built where the Go toolchain is).
. "$(dirname "$0")/lib.sh"

mkdir sh as # t/lib.sh: variant_mk, both, run_both, same_answers
cfgline=
[ -n "${TEST_START_METHOD:-}" ] && cfgline="start_method: $TEST_START_METHOD"
for d in sh as; do
	{ [ -n "$cfgline" ] && echo "$cfgline"; echo "cache: true"; } >$d/c.yaml
done
RAW=$TEST_HELPERDIR/rawread
JIT=$TEST_HELPERDIR/jitread
GOREAD=$TEST_HELPERDIR/goread
set -- "$RAW" "$JIT mmap" "$JIT mprotect"
if [ -x "$GOREAD" ]; then
	set -- "$@" "$GOREAD"
else
	skip "no Go toolchain (golang-go): the cgo program t/helpers/goread was not built"
fi

# case_mk BODY: the makefile of one case, its calls in BODY
case_mk() {
	printf 'ASYNC_COMPILE_CONFIG := c.yaml\nload @PLUGIN@\n%s\nall: ; @:\n' "$1" | variant_mk Makefile
}

# -- memo: the same command twice in one make, the file changed between
for cmd in "$@"; do
	name=${cmd##*/}
	case_mk "A := \$(FN $cmd data.txt)
\$(file >data.txt,two)
B := \$(FN $cmd data.txt)
\$(info A=\$(A) B=\$(B))"
	both sh -c 'echo one >data.txt'
	run_both
	ok "$name: the second call sees the file changed between them" \
		expect_grep '^A=one B=two$' as.out
	ok "$name, memo: the same as \$(shell)" same_answers
	rm -rf sh/Makefile sh/data.txt as/Makefile as/data.txt
done

# -- speculation and the cache: the file changes between makes
for cmd in "$@"; do
	name=${cmd##*/}
	case_mk "X := \$(FN $cmd data.txt)
\$(info X=\$(X))"
	for v in 1 2 3; do
		# a new identity each time (size, and mtime or not)
		both sh -c "printf 'v%0${v}d\n' $v >data.txt"
		ASYNC_COMPILE_DEBUG=2 run_both
		ok "$name, run $v (speculated and cached after the first): the same as \$(shell)" \
			same_answers
	done
	case $name in
	rawread) why="enters the kernel itself: .*rawread (a system-call instruction at 0x";;
	goread) why="enters the kernel itself: .*goread (a Go program";;
	*) why="code made at run time";;
	esac
	# an ASan-built helper maps the sanitizer runtime, whose own system
	# calls are the first reason found, or is not traced at all
	[ "${TEST_VARIANT:-}" = asan ] && why="enters the kernel itself: .*\\(libasan\\|$name\\)\\|was not traced\\|$why"
	ok "$name: the answer is not kept, and the reason says why" expect_grep "$why" as.err
	rm -rf sh/Makefile sh/data.txt as/Makefile as/data.txt
done

# -- a file mapped shared and writable: opaque, and the reason says so
case_mk "X := \$(FN $JIT shared data.txt)
\$(info X=\$(X))"
both sh -c 'echo shared >data.txt'
ASYNC_COMPILE_DEBUG=2 run_both
ok "a shared writable mapping: the same as \$(shell)" same_answers
why="a file mapped shared and writable:.*data.txt"
[ "${TEST_VARIANT:-}" = asan ] && why="enters the kernel itself: .*libasan\\|was not traced\\|$why"
ok "a shared writable mapping: opaque, saying so" expect_grep "$why" as.err
rm -rf sh/* as/*

# -- what compile probes run stays pure: a compiler probe is memoized
# (one compile for two calls, the second answered from the first; its
# output goes to /dev/null: cc reads the clock, which reaches an answer)
if command -v cc >/dev/null; then
	write_config
	write_mk Makefile <<'EOF2'
load @PLUGIN@
P := cc -c -x c /dev/null -o /dev/null >/dev/null 2>&1 && echo ok
A := $(async-shell $(P))
B := $(async-shell $(P))
$(info A=$(A) B=$(B) $(async-stats))
all: ; @:
EOF2
	ASYNC_COMPILE_DEBUG=1 run_make
	ok "a compiler probe (cc, cc1, as) runs once for two calls" \
		sh -c 'grep -q "^A=ok B=ok .*memo_hits=1" out || { cat out err; exit 1; }'
else
	skip "no cc: a compiler probe runs once for two calls"
fi

done_testing
