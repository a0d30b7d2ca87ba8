#!/bin/sh
# Scale, through make: a job's output far past max_output, and 10,000
# jobs queued at once.  Nothing here depends on how the pool's processes
# start, so unlike t7000 this runs once per make.
. "$(dirname "$0")/lib.sh"

# 50 MB of output under max_output: capped, bounded memory, no deadlock.
write_config "workers: 2" "max_output: 1MiB"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try flood,head -c 50000000 /dev/zero | tr '\0' x; echo done >&2)
$(async-wait)
$(file >flood.out,$(flood.out))
$(info flood=$(flood.status) err=$(flood.err))
all: ; @:
EOF2
"$TEST_HELPERDIR/maxrss.py" "$MAKE_UT" >out 2>err 3>rss; make_status=$?
diag "50 MB job, max_output 1MiB: make peak RSS $(cat rss)"
ok "50 MB job: capped at max_output" expect_eq 1048577 "$(wc -c <flood.out | tr -d ' ')" "bytes (cap + newline from \$(file))"
ok "50 MB job: the cap is noted in NAME.err" expect_grep '^flood=0 err=done asynccompile: stdout truncated at 1048576 bytes' out
ok "50 MB job: make's memory stays bounded (< 64 MB)" \
	sh -c 'kb=$(sed -n "s/maxrss_kb=//p" rss); [ "$kb" -lt 65536 ]'

# 10,000 jobs at once.  Under ASan, 2,000: instrumented, the 10,000 took
# 213 s of CI's 40 minutes, and memory errors show at 2,000 as well.
n=10000
[ "${TEST_VARIANT:-}" = asan ] && n=2000
write_config "workers: 2"
write_mk Makefile <<EOF2
load @PLUGIN@
N := \$(shell seq 1 $n)
\$(foreach i,\$(N),\$(async-try n\$i,echo \$i))
\$(async-wait)
good := \$(foreach i,\$(N),\$(if \$(filter 0:\$i,\$(n\$i.status):\$(n\$i.out)),x))
\$(info good=\$(words \$(good)))
all: ; @:
EOF2
start=$(date +%s%N)
TEST_MAKE_TIMEOUT=120 "$TEST_HELPERDIR/maxrss.py" "$MAKE_UT" -j2 >out 2>err 3>rss; make_status=$?
end=$(date +%s%N)
diag "$n jobs: $(( (end - start) / 1000000 )) ms, make peak RSS $(cat rss)"
ok "$n jobs at once: all answered correctly" expect_grep "^good=$n\$" out

done_testing
