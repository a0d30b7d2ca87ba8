#!/bin/sh
# launcher: [ccache]: the first build fills the cache, the second is all
# hits, and probes under the launcher give the plain answers.
. "$(dirname "$0")/lib.sh"

command -v ccache >/dev/null 2>&1 || skip_all "ccache is not installed (apt-get install ccache)"
command -v gcc >/dev/null 2>&1 || skip_all "gcc is not installed"
unset CCACHE_PREFIX CCACHE_DISABLE CCACHE_RECACHE CCACHE_READONLY CCACHE_DIR CCACHE_CONFIGPATH

write_config "launcher: [ccache]" "env:" "  CCACHE_DIR: $TRASH/ccache"

# ccache's counter NAME (hits are split into direct and preprocessed).
ccache_stat() { # name...
	CCACHE_DIR=$TRASH/ccache ccache --print-stats 2>/dev/null | awk -v want=" $* " '
		index(want, " " $1 " ") { n += $2 } END { print n + 0 }'
}
hits() { ccache_stat direct_cache_hit preprocessed_cache_hit; }
misses() { ccache_stat cache_miss; }

N=4
i=1
objs=
while [ $i -le $N ]; do
	printf '#include <stdio.h>\nint f%d(void) { return printf("%d\\n"); }\n' $i $i >s$i.c
	objs="$objs s$i.o"
	i=$((i + 1))
done
cat >Makefile <<EOF
load $ASYNC_PLUGIN
OBJS =$objs
all: \$(OBJS)
\$(OBJS) &:
	\$(foreach o,\$(OBJS),\$(async-compile \$o,gcc -O2 -c \$(o:.o=.c) -o \$o))
	\$(async-wait \$(OBJS))
EOF

run_make -j2
ok "a cold build through launcher [ccache]" expect_make_ok
ok "the commands carry the launcher" expect_grep '^ccache gcc -O2 -c s1.c -o s1.o$' out
ok "the objects exist" sh -c 'for o in $0; do [ -s $o ] || exit 1; done' "$objs"
ok "cold: $N misses, no hit" expect_eq "$N 0" "$(misses) $(hits)" "misses and hits"
cksum $objs >first

rm -f $objs
run_make -j2
ok "a warm build" expect_make_ok
ok "warm: every compile was a hit" expect_eq "$N $N" "$(misses) $(hits)" "misses and hits"
ok "the cached objects are the same" sh -c 'cksum $0 | cmp -s - first' "$objs"

# A build step that fails under ccache still fails, with the compiler's
# message, and is not cached.
echo 'int broken(void) { return }' >s2.c
rm -f $objs
run_make -j2
ok "a compile error under ccache fails the recipe" expect_eq 2 "$make_status" "exit status"
ok "the failure names the job" expect_grep 's2.o (status 1)' err
ok "the compiler's message is shown" expect_grep 's2.c:1:.*error' err
ok "no jobserver token message" expect_no_grep INTERNAL err

# Probes: ccache runs what it cannot cache (output to /dev/null, input
# from stdin, a link) as is.
cat >probe.mk <<EOF
load $ASYNC_PLUGIN
include $TEST_ROOT/asynccompile.mk
CC = gcc
\$(call async-cc-option,-fstack-protector-strong)
\$(call async-cc-option,-fno-such-flag-xyz)
\$(call async-as-instr,nop)
\$(call async-as-instr,no_such_mnemonic_xyz)
\$(call async-ld-option,--build-id)
\$(call async-ld-option,--no-such-ld-option-xyz)
\$(async-probes-wait)
\$(info probes=[\$(call cc-option-result,-fstack-protector-strong)] [\$(call cc-option-result,-fno-such-flag-xyz)] [\$(call as-instr-result,nop,y,n)\$(call as-instr-result,no_such_mnemonic_xyz,y,n)] [\$(call ld-option-result,--build-id)] [\$(call ld-option-result,--no-such-ld-option-xyz)])
all: ; @:
EOF
run_make -f probe.mk -j2
ok "probes under launcher [ccache]" expect_make_ok
ok "probes give the plain answers" \
	expect_grep '^probes=\[-fstack-protector-strong\] \[\] \[yn\] \[--build-id\] \[\]$' out

done_testing
