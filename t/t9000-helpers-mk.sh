#!/bin/sh
# asynccompile.mk: the batch probe macros give the answers serial
# $(shell) probes give, run in the pool side by side, are safe with any
# flag text, and work without the plugin.
. "$(dirname "$0")/lib.sh"

command -v gcc >/dev/null 2>&1 || skip_all "gcc is not installed"
command -v ld >/dev/null 2>&1 || skip_all "ld is not installed"

# An instruction the assembler takes and one it rejects.
case $(uname -m) in
x86_64|i?86) good_insn='movl %eax$(comma)%ebx'; bad_insn='movl %eax$(comma)%nosuchreg' ;;
*) good_insn='nop'; bad_insn='no_such_mnemonic %r99' ;;
esac

# probe_mk [LOAD]: the makefile from stdin with the plugin and the helper
# file filled in; LOAD=no leaves the plugin out.
probe_mk() {
	rm -f result async serial stats
	{
		[ "${1:-}" = no ] || echo "load $ASYNC_PLUGIN"
		echo "include $TEST_ROOT/asynccompile.mk"
		sed -e "s|@GOOD@|$good_insn|g" -e "s|@BAD@|$bad_insn|g"
	} >Makefile
}

# The same questions, asked the Kbuild way: one $(shell) after another.
serial_defs='
try-run = $(shell if ($1) >/dev/null 2>&1; then echo "$2"; else echo "$3"; fi)
s-cc-option = $(call try-run,gcc -Werror $1 -c -x c /dev/null -o /dev/null,$1,$2)
s-cc-option-yn = $(if $(call s-cc-option,$1),y,n)
s-cc-disable-warning = $(if $(call s-cc-option,-W$1),-Wno-$1)
s-as-instr = $(call try-run,printf "%b\n" "$1" | gcc -Werror -Wa$(comma)--fatal-warnings -c -x assembler-with-cpp -o /dev/null -,$2,$3)
s-as-option = $(call try-run,gcc -Werror $1 -c -x assembler-with-cpp /dev/null -o /dev/null,$1,$2)
s-ld-option = $(call try-run,ld $1 -v,$1,$2)
'

# Every macro, with a flag the tools accept and one they reject.  The
# expected line is what gcc 12 and binutils give, and what Kbuild gives.
body='
CC = gcc
$(call async-cc-option,-fstack-protector-strong)
$(call async-cc-option,-fno-such-flag-xyz)
$(call async-cc-options,-Wall -fno-nope-xyz -Wextra)
$(call async-cc-disable-warning,unused-parameter)
$(call async-cc-disable-warning,such-warning-xyz)
$(call async-as-instr,@GOOD@)
$(call async-as-instr,@BAD@)
$(call async-as-instr,nop\nnop)
$(call async-as-option,-Wa$(comma)--noexecstack)
$(call async-as-option,-Wa$(comma)--no-such-as-opt)
$(call async-ld-option,--build-id)
$(call async-ld-option,--no-such-ld-option-xyz)
$(async-probes-wait)
stats := $(async-stats)
async := [$(call cc-option-result,-fstack-protector-strong)] \
	[$(call cc-option-result,-fno-such-flag-xyz)] \
	[$(call cc-option-result,-fno-such-flag-xyz,-fstack-protector)] \
	[$(call cc-options-result,-Wall -fno-nope-xyz -Wextra)] \
	[$(call cc-option-yn-result,-fstack-protector-strong)$(call cc-option-yn-result,-fno-such-flag-xyz)] \
	[$(call cc-disable-warning-result,unused-parameter)] \
	[$(call cc-disable-warning-result,such-warning-xyz)] \
	[$(call as-instr-result,@GOOD@,ok,bad)] \
	[$(call as-instr-result,@BAD@,ok,bad)] \
	[$(call as-instr-result,@BAD@,ok)] \
	[$(call as-instr-result,nop\nnop,two-lines-ok)] \
	[$(call as-option-result,-Wa$(comma)--noexecstack)] \
	[$(call as-option-result,-Wa$(comma)--no-such-as-opt,fb)] \
	[$(call ld-option-result,--build-id)] \
	[$(call ld-option-result,--no-such-ld-option-xyz)] \
	[$(call ld-option-result,--no-such-ld-option-xyz,--fallback)]
serial := [$(call s-cc-option,-fstack-protector-strong)] \
	[$(call s-cc-option,-fno-such-flag-xyz)] \
	[$(call s-cc-option,-fno-such-flag-xyz,-fstack-protector)] \
	[$(strip $(foreach f,-Wall -fno-nope-xyz -Wextra,$(call s-cc-option,$f)))] \
	[$(call s-cc-option-yn,-fstack-protector-strong)$(call s-cc-option-yn,-fno-such-flag-xyz)] \
	[$(call s-cc-disable-warning,unused-parameter)] \
	[$(call s-cc-disable-warning,such-warning-xyz)] \
	[$(call s-as-instr,@GOOD@,ok,bad)] \
	[$(call s-as-instr,@BAD@,ok,bad)] \
	[$(call s-as-instr,@BAD@,ok)] \
	[$(call s-as-instr,nop\nnop,two-lines-ok)] \
	[$(call s-as-option,-Wa$(comma)--noexecstack)] \
	[$(call s-as-option,-Wa$(comma)--no-such-as-opt,fb)] \
	[$(call s-ld-option,--build-id)] \
	[$(call s-ld-option,--no-such-ld-option-xyz)] \
	[$(call s-ld-option,--no-such-ld-option-xyz,--fallback)]
$(file >async,$(async))
$(file >serial,$(serial))
$(file >stats,$(stats))
all: ; @:
'
expected='[-fstack-protector-strong] [] [-fstack-protector] [-Wall -Wextra] [yn] [-Wno-unused-parameter] [] [ok] [bad] [] [two-lines-ok] [-Wa,--noexecstack] [fb] [--build-id] [] [--fallback]'

printf '%s\n%s\n' "$serial_defs" "$body" | probe_mk
run_make -j4
ok "probes run while the makefile is read" expect_make_ok
ok "batch results are the real tools' answers" expect_eq "$expected" "$(cat async 2>&1)"
ok "batch results equal serial \$(shell) probes" expect_eq "$(cat serial 2>&1)" "$(cat async 2>&1)"
ok "each probe is one pool job, all collected by one wait" \
	expect_grep '^submitted=14 completed=14 .*running=0 queued=0' stats

printf '%s\n%s\n' "$serial_defs" "$body" | probe_mk no
run_make
ok "without the plugin the file still works" expect_make_ok
ok "without the plugin the results are the same" expect_eq "$expected" "$(cat async 2>&1)"
ok "without the plugin nothing was queued" expect_eq "" "$(cat stats 2>&1)"

# ASYNC_COMPILE_PROBE_CFLAGS is part of the question: with -fsanitize=thread in
# the flags, gcc rejects -fsanitize=address.
probe_mk <<'EOF'
CC = gcc
ASYNC_COMPILE_PROBE_CFLAGS = -fsanitize=thread
$(call async-cc-option,-fsanitize=address)
$(call async-cc-option,-fsanitize=undefined)
$(async-probes-wait)
$(file >result,[$(call cc-option-result,-fsanitize=address)] [$(call cc-option-result,-fsanitize=undefined)])
all: ; @:
EOF
run_make
ok "ASYNC_COMPILE_PROBE_CFLAGS takes part in cc probes" \
	expect_eq "[] [-fsanitize=undefined]" "$(cat result 2>&1)"

# Flag text a job NAME may not hold.  The fake compiler accepts exactly
# -f=a, so one answer leaking into another probe (two flags mapped to
# one name) shows up as a second accepted flag.
cat >fakecc <<'EOF'
#!/bin/sh
for a; do [ "$a" = "-f=a" ] && exit 0; done
exit 1
EOF
chmod +x fakecc
probe_mk <<'EOF'
CC = ./fakecc
flags := -f=a -f:a -f%3Da -f%a -f$(comma)a -f\#a -f$$a -f(a) -f=a=
$(call async-cc-options,$(flags))
$(call async-cc-option,-f a)
$(call async-cc-option,-f%20a)
$(async-probes-wait)
$(file >result,[$(call cc-options-result,$(flags) -f%20a)] [$(call cc-option-result,-f a)] $(async-stats))
all: ; @:
EOF
run_make -j4
ok "awkward flag text is accepted" expect_make_ok
ok "every flag gets its own probe and answer" \
	expect_grep '^\[-f=a\] \[\] submitted=11 ' result

# Declaring twice, forgetting the wait, and never declaring: no error,
# one job per flag, and the right answers.
probe_mk <<'EOF'
CC = gcc
$(call async-cc-option,-Wall)
$(call async-cc-option,-Wall)
$(call async-cc-option,-fno-such-flag-xyz)
r1 := $(call cc-option-result,-Wall)
r2 := $(call cc-option-result,-fno-such-flag-xyz,fb)
r3 := $(call cc-option-yn-result,-Wextra)
r4 := $(call cc-option-result,-Wall)
$(call async-cc-option,-Wall)
$(file >result,$(r1) $(r2) $(r3) $(r4) $(async-stats))
all: ; @:
EOF
run_make
ok "repeated and undeclared probes need no wait" expect_make_ok
ok "they are answered once each" expect_grep '^-Wall fb y -Wall submitted=3 completed=3 ' result

# async-probes-wait collects only the probes: the makefile's own jobs stay
# queued for their own wait (also when no probe is pending), and a plain
# $(async-wait) before it is fine.
probe_mk <<'EOF'
CC = gcc
$(async-compile mine,echo mine-done)
$(call async-cc-option,-Wall)
$(async-probes-wait)
before := [$(flavor mine.status)] [$(call cc-option-result,-Wall)]
$(async-probes-wait)
before += [$(flavor mine.status)]
$(async-wait mine)
$(call async-cc-option,-Wextra)
$(async-wait)
$(async-probes-wait)
$(file >result,$(before) [$(mine.status)] [$(call cc-option-result,-Wextra)])
all: ; @:
EOF
run_make
ok "async-probes-wait leaves other jobs alone" expect_make_ok
ok "the makefile's job waited for its own wait" \
	expect_eq "[recursive] [-Wall] [recursive] [0] [-Wextra]" "$(cat result 2>&1)"

# The probes really run at the same time: a compiler that logs when it
# runs and waits (at most 30 s) until four of its kind have started.
cat >slowcc <<EOF
#!/bin/sh
echo "\$(date +%s%N) +1" >>"$TRASH/spans"
mkdir -p "$TRASH/bar" && touch "$TRASH/bar/\$\$"
i=0
while [ \$(ls "$TRASH/bar" | wc -l) -lt 4 ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
echo "\$(date +%s%N) -1" >>"$TRASH/spans"
exec gcc "\$@"
EOF
chmod +x slowcc
write_config "workers: 4"
probe_mk <<'EOF'
CC = ./slowcc
$(call async-cc-options,-Wall -Wextra -Wshadow -fno-such-flag-xyz)
$(async-probes-wait)
$(file >result,$(call cc-options-result,-Wall -Wextra -Wshadow -fno-such-flag-xyz))
all: ; @:
EOF
rm -rf spans bar
run_make -j4
ok "slow probes give the same answers" expect_eq "-Wall -Wextra -Wshadow" "$(cat result 2>&1)"
ok "-j4: four probes ran at once" expect_eq 4 "$(max_overlap spans)" "max overlap"

# Probes declared and read inside recipes, under a jobserver.
probe_mk <<'EOF'
CC = gcc
all: a b
a:
	@: $(call async-cc-option,-Wall)$(call async-ld-option,--build-id)
	@echo a=$(call cc-option-result,-Wall) $(call ld-option-result,--build-id)
b:
	@echo b=$(call cc-disable-warning-result,unused-parameter)
EOF
run_make -j2
ok "recipes can declare and read probes" expect_make_ok
ok "recipe results" sh -c 'grep -qx "a=-Wall --build-id" out && grep -qx "b=-Wno-unused-parameter" out || { cat out; exit 1; }'

done_testing
