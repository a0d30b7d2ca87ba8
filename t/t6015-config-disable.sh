#!/bin/sh
# test: per-start-method
# ASYNC_COMPILE_DISABLE=1, the off switch: the plugin loads and every
# function gives what it gives with the pool, but each command runs at
# once in make's process, as $(shell) runs one; no pool, no tracer, no
# trace file, nothing read from or written to the store.
. "$(dirname "$0")/lib.sh"
write_config "cache: true" "trace: $TRASH/timeline.json"
write_mk Makefile <<'EOF2'
load @PLUGIN@
MAKEPID := $(shell echo $$PPID)
$(async-compile c1,echo compiled-one; echo warned-one >&2)
$(async-try t1,echo probe; exit 3)
$(async-try who,echo $$PPID)
S := $(async-shell echo shelled; echo shell-err >&2; exit 4)
$(info S=$(S) status=$(.SHELLSTATUS))
S2 := $(async-shell echo again)
L := $(async-shell grep -c asynccompile-trace /proc/$$$$/maps)
$(async-wait)
$(info c1=$(c1.status) [$(c1.out)] [$(c1.err)] t1=$(t1.status) [$(t1.out)] S2=$(S2))
$(info where=$(if $(filter $(MAKEPID),$(who.out)),make,pool))
$(info children=$(shell cat /proc/$(MAKEPID)/task/*/children | wc -w))
$(info tracer=$(if $(filter 0,$(L)),plain,traced))
all: a b
a: ; @$(async-compile s1,echo step-one)$(async-compile s2,echo step-two >&2)$(async-wait)
b: ; @$(async-compile f,echo failing; exit 5)$(async-wait)
EOF2

strip() { grep -v -e '^where=' -e '^children=' -e '^tracer=' "$1"; }

ASYNC_COMPILE_DISABLE=1 run_make -j1
cp out off.out; cp err off.err; off_status=$make_status
diag "disabled: $(tr '\n' '|' <off.out) / $(tr '\n' '|' <off.err)"
ok "disabled: build steps run in make's process, not in a pool" expect_grep '^where=make$' off.out
# (read from /proc as pgrep -P would: pgrep hangs with ASan's runtime preloaded)
ok "disabled: make has no child but the one \$(shell) that counts them" expect_grep '^children=1$' off.out
ok "disabled: async-shell runs untraced" expect_grep '^tracer=plain$' off.out
ok "disabled: no store directory is created" test ! -e "$XDG_CACHE_HOME/asynccompile"
ok "disabled: no trace file is written" test ! -e timeline.json

run_make -j1
diag "enabled: $(tr '\n' '|' <out) / $(tr '\n' '|' <err)"
ok "enabled (the same makefile): its jobs ran in the pool" expect_grep '^where=pool$' out
ok "enabled: async-shell ran traced" expect_grep '^tracer=traced$' out
ok "enabled: the store was written" test -d "$XDG_CACHE_HOME/asynccompile"
ok "the same exit status with and without the pool" expect_eq "$make_status" "$off_status" "status"
ok "the same status, values and output on stdout" expect_eq "$(strip out)" "$(strip off.out)" "stdout"
ok "the same messages on stderr" expect_eq "$(cat err)" "$(cat off.err)" "stderr"
ok "the failing build step fails make in both" expect_grep '\*\*\* \[Makefile:[0-9]*: b\] Error 5' off.err
ASYNC_COMPILE_DISABLE=0 run_make -j1
ok "ASYNC_COMPILE_DISABLE=0 does not disable" expect_grep '^where=pool$' out

# a build step never waited for is an error, with or without the pool
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-compile lost,echo lost)
$(async-try dropped,true)
$(async-drop dropped)
all: ; @:
EOF2
run_make
cp err on.err; on_status=$make_status
ASYNC_COMPILE_DISABLE=1 run_make
ok "disabled: a build step never waited for fails make as with the pool" \
	sh -c '[ "$0" -ne 0 ] && [ "$0" = "$1" ] || { echo "status $0, with the pool $1"; exit 1; }' "$make_status" "$on_status"
ok "disabled: ... with the same message" expect_eq "$(cat on.err)" "$(cat err)" "stderr"

# -n: a build step queued in a recipe is echoed and not run, as with the pool
rm -rf "$XDG_CACHE_HOME/asynccompile"
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: ; @$(async-compile s,touch ran)$(async-wait)
EOF2
ASYNC_COMPILE_DISABLE=1 run_make -n
ok "disabled, make -n: the build step is echoed" expect_grep '^touch ran$' out
ok "disabled, make -n: and not run" test ! -e ran
ASYNC_COMPILE_DISABLE=1 run_make
ok "disabled: a recipe's build step runs" test -e ran

done_testing
