#!/bin/sh
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
write_mk Makefile <<'EOF2'
load @PLUGIN@
D = python3 drained.py
all:
	@$(async-compile s,echo o1; $(D) 1; echo e1 >&2; $(D) 2; echo o2; $(D) 1; echo e2 >&2; $(D) 2; echo o3)
	@$(async-wait)
EOF2

make_status=0
timeout -k 5 60 "$MAKE_UT" >both 2>&1 || make_status=$?
ok "make exits 0" test "$make_status" -eq 0
ok "stdout and stderr interleave as the step wrote them" \
	expect_eq "o1 e1 o2 e2 o3" "$(tr '\n' ' ' <both | sed 's/ $//')" "combined output"

run_make
ok "apart: make exits 0" expect_make_ok
ok "apart: stdout holds the stdout lines" expect_eq "o1 o2 o3" "$(tr '\n' ' ' <out | sed 's/ $//')" stdout
ok "apart: stderr holds the stderr lines" expect_eq "e1 e2" "$(tr '\n' ' ' <err | sed 's/ $//')" stderr

# A failing step: its output in order, then the plugin's report.
write_config "echo: false"
write_mk Makefile <<'EOF2'
load @PLUGIN@
D = python3 drained.py
all:
	@$(async-compile s,echo o1; $(D) 1; echo e1 >&2; $(D) 2; echo o2; exit 3)
	@$(async-wait)
EOF2
make_status=0
timeout -k 5 60 "$MAKE_UT" >both 2>&1 || make_status=$?
ok "failing step: make fails" test "$make_status" -ne 0
ok "failing step: its output in order before the report" \
	expect_eq "o1 e1 o2" "$(head -n 3 both | tr '\n' ' ' | sed 's/ $//')" "first lines"

done_testing
