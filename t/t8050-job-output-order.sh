#!/bin/sh
# test: per-start-method
# A build step's stdout and stderr reach make's in the order the step
# wrote them, stderr text still on stderr.  The step waits after each
# write until the worker has read it (its pipe is empty: FIONREAD), so
# the order it wrote in is the order the worker saw, by construction.
. "$(dirname "$0")/lib.sh"
cat >drained.py <<'EOF2'
import array, fcntl, sys, termios, time
fd, n, end = int(sys.argv[1]), array.array("i", [0]), time.monotonic() + 10
while time.monotonic() < end:
    fcntl.ioctl(fd, termios.FIONREAD, n, True)
    if n[0] == 0:
        break
    time.sleep(0.005)
EOF2
write_config "echo: false"
# order_mk COMMAND: one step running COMMAND, where $(D) N waits until
# the worker has read everything written to fd N.
order_mk() {
	printf 'load %s\nD = python3 drained.py\nall:\n\t@$(async-compile s,%s)\n\t@$(async-wait)\n' \
		"$ASYNC_PLUGIN" "$1" >Makefile
}
# both: make with stdout and stderr in one file, ./both
both() {
	make_status=0
	timeout -k 5 60 "$MAKE_UT" >both 2>&1 || make_status=$?
}
words() { tr '\n' ' ' <"$1" | sed 's/ $//'; }

order_mk 'echo o1; $(D) 1; echo e1 >&2; $(D) 2; echo o2; $(D) 1; echo e2 >&2; $(D) 2; echo o3'
both
ok "make exits 0" test "$make_status" -eq 0
ok "stdout and stderr interleave as the step wrote them" \
	expect_eq "o1 e1 o2 e2 o3" "$(words both)" "combined output"

run_make
ok "apart: make exits 0" expect_make_ok
ok "apart: stdout holds the stdout lines" expect_eq "o1 o2 o3" "$(words out)" stdout
ok "apart: stderr holds the stderr lines" expect_eq "e1 e2" "$(words err)" stderr

# A failing step: its output in order, then the plugin's report.
order_mk 'echo o1; $(D) 1; echo e1 >&2; $(D) 2; echo o2; exit 3'
both
ok "failing step: make fails" test "$make_status" -ne 0
head -n 3 both >first
ok "failing step: its output in order before the report" \
	expect_eq "o1 e1 o2" "$(words first)" "first lines"

done_testing
