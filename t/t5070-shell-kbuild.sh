#!/bin/sh
# asynccompile.mk's Kbuild drop-ins (try-run, cc-option, cc-option-yn,
# cc-disable-warning, as-option, as-instr, ld-option): Kbuild's answers
# with the plugin and without it, and a chain of inline probes, each
# built from earlier answers, answered ahead of need on the second run.
. "$(dirname "$0")/lib.sh"

# A compiler that rejects flags with "bad" in them.  It writes nothing (a
# probe that wrote a file would never be run ahead of need): how often
# probes ran shows in $(async-stats).
cat >fakecc <<EOF2
#!/bin/sh
# it reads a source given as "-", as compilers do (a writer killed by
# SIGPIPE is a process not traced to its end: an opaque run)
for a; do [ "\$a" = - ] && cat >/dev/null; done
for a; do case \$a in -fbad*|-Wbad*|-Wno-bad*|-Wa,-bad*|--bad*) exit 1;; esac; done
case "\$*" in *-fgood1*-fneeds-good1*) exit 0;; *-fneeds-good1*) exit 1;; esac
exit 0
EOF2
chmod +x fakecc
settle

write_mk Makefile <<EOF2
ifdef PLUGIN
load \$(PLUGIN)
endif
include $TEST_ROOT/asynccompile.mk
CC := $TRASH/fakecc
LD := $TRASH/fakecc
KBUILD_CFLAGS := -O2
KBUILD_AFLAGS :=
KBUILD_LDFLAGS :=
KBUILD_CFLAGS += \$(call cc-option,-fgood1)
# accepted only when -fgood1 is already in KBUILD_CFLAGS: a chain
KBUILD_CFLAGS += \$(call cc-option,-fneeds-good1,-fchain-broken)
KBUILD_CFLAGS += \$(call cc-option,-fbad1,-falt1)
KBUILD_CFLAGS += \$(call cc-disable-warning,unused)
KBUILD_CFLAGS += \$(call cc-disable-warning,bad2)
YN := \$(call cc-option-yn,-fbad3) \$(call cc-option-yn,-fgood3)
KBUILD_AFLAGS += \$(call as-option,-Wa\$(comma)-good4) \$(call as-option,-Wa\$(comma)-bad4)
KBUILD_AFLAGS += \$(call as-instr,movl %eax\$(comma)%ebx,-DHAVE_MOVL,-DNO)
KBUILD_LDFLAGS += \$(call ld-option,--good5,--alt5) \$(call ld-option,--bad5,--alt5)
TR := \$(call try-run,exit 3,yes,no)
\$(info flags: \$(strip \$(KBUILD_CFLAGS)) | \$(strip \$(KBUILD_AFLAGS)) | \$(strip \$(KBUILD_LDFLAGS)) | \$(YN) | \$(TR))
all: ; @echo \$(if \$(filter undefined,\$(origin async-wait)),no plugin,\$(async-stats))
EOF2
want='flags: -O2 -fgood1 -fneeds-good1 -falt1 -Wno-unused | -Wa,-good4 -DHAVE_MOVL | --good5 --alt5 | n y | no'

run_make
ok "without the plugin: make succeeds" expect_make_ok
ok "without the plugin: Kbuild's answers" expect_grep "^$want\$" out
ok "without the plugin: it really was not loaded" expect_grep '^no plugin$' out
# -j2 both times: under make 4.4 MAKEFLAGS is in every probe's
# environment, and another -j is another environment
run_make -j2 PLUGIN="$ASYNC_PLUGIN"
ok "with the plugin, first run: make succeeds" expect_make_ok
ok "with the plugin, first run: the same answers" expect_grep "^$want\$" out
ok "with the plugin, first run: 13 probes ran" expect_grep ' spec_misses=13 ' out
run_make -j2 PLUGIN="$ASYNC_PLUGIN"
ok "second run: the same answers" expect_grep "^$want\$" out
ok "second run: all 13 answered by speculation" expect_grep ' speculated=13 spec_hits=13 spec_misses=0 spec_unused=0 ' out
ok "second run: each probe ran once, ahead of need" \
	expect_grep ' spec_misses=0 .* spec_unproven=0 spec_rejected=0 memo_stale=0$' out
ok "no scratch directory is left" expect_eq "" "$(ls -a | grep '^\.tmp_')"
# Asking why must not cost the answers: the debug switch is compared like
# any variable (a command may print it), and speculated jobs carry make's
# environment forward, the switch with it.
export ASYNC_COMPILE_DEBUG=1
run_make -j2 PLUGIN="$ASYNC_PLUGIN"
unset ASYNC_COMPILE_DEBUG
ok "ASYNC_COMPILE_DEBUG=1: make succeeds" expect_make_ok
ok "ASYNC_COMPILE_DEBUG=1: the same answers" expect_grep "^$want\$" out
ok "ASYNC_COMPILE_DEBUG=1: all 13 still answered by speculation" \
	expect_grep ' speculated=13 spec_hits=13 spec_misses=0 spec_unused=0 ' out
ok "ASYNC_COMPILE_DEBUG=1: no answer refused for another environment" \
	expect_no_grep 'another environment' err

# A makefile that defined a macro before the include keeps its own.
write_mk Makefile <<EOF2
load @PLUGIN@
cc-option = mine
include $TEST_ROOT/asynccompile.mk
\$(info [\$(call cc-option,-fx)])
all: ; @:
EOF2
run_make
ok "a makefile's own cc-option wins" expect_grep '^\[mine\]$' out

done_testing
