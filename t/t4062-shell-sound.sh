#!/bin/sh
# Sound answers: async-shell gives $(shell)'s answer or does not reuse
# one.  Each case runs the same makefiles twice, once with $(shell) in a
# directory of its own and once with $(async-shell) (speculation, memo and,
# where named, the cache), changes what the commands depend on between
# runs, and compares.  The cases are the ways speculation and the cache
# went wrong before commands were traced (issue 22, items 1-4 and 6-8).
. "$(dirname "$0")/lib.sh"

# In a directory of its own per variant: "sh" runs $(shell), "as" runs
# $(async-shell) (t/lib.sh: variant_mk, both, run_both, same_answers).
mkdir sh as
stat_of() { # key
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" as.out | tail -n1
}

# -- item 2: a command with side effects is never run ahead of need
slow_mk
variant_mk Makefile <<'EOF2'
load @PLUGIN@
include slow.mk
ifeq ($(wildcard .config),)
_ := $(FN rm -rf generated)
endif
all: ; @ls generated
config: ; @echo y >.config; mkdir -p generated; echo precious >generated/autoconf.h
EOF2
run_both all
run_both config
run_both all
ok "a removal run at load never deletes what a later run made" \
	sh -c 'grep -qx precious as/generated/autoconf.h && grep -qx autoconf.h as.out'
ok "the run that does not ask for it: the same as \$(shell)" same_answers
run_both all
ok "and again" same_answers
rm -rf sh/* as/*

# -- item 3: a file the makefile writes while it is read
slow_mk
variant_mk Makefile <<'EOF2'
load @PLUGIN@
include slow.mk
$(file >stamp.txt,$(file <version.in))
A := $(FN cat stamp.txt)
$(info A=$(A))
all: ; @:
EOF2
for v in 1 2 3; do
	both sh -c "echo $v >version.in"
	run_both
	ok "a stamp the makefile rewrote, version $v: \$(shell)'s answer" \
		expect_grep "^A=$v\$" as.out
	ok "version $v: the same as \$(shell)" same_answers
done
rm -rf sh/* as/*

# -- item 4: a recursive variable expanded again in a recipe
variant_mk Makefile <<'EOF2'
load @PLUGIN@
LIST = $(FN ls objs)
$(info parse: [$(LIST)])
all: b a
a: b ; @echo "recipe: [$(LIST)]"
b: ; @touch objs/new.o
.PHONY: all a b
EOF2
both mkdir objs
run_both
ok "re-expanded in a recipe after another target made a file: the new listing" \
	expect_grep '^recipe: \[new.o\]$' as.out
ok "the same as \$(shell)" same_answers
both rm -f objs/new.o
run_both
ok "second run (speculated at parse time): the same as \$(shell)" same_answers
rm -rf sh/* as/*

# -- item 1: the configuration the makefile picks
cfgline=
[ -n "${TEST_START_METHOD:-}" ] && cfgline="start_method: $TEST_START_METHOD"
for d in sh as; do printf '%s\nenv: {WHO: my}\n' "$cfgline" >$d/my.yaml; done
variant_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-config my.yaml)
X := $(FN echo WHO=$$WHO)
$(info X=$(X))
all: ; @:
EOF2
# $(shell) knows no config: its side is told WHO by the environment
for run in 1 2 3; do
	(cd sh && WHO=my run_make; echo "$make_status" >.status); cp sh/out sh.out
	(cd as && run_make; echo "$make_status" >.status); cp as/out as.out
	sh_status=$(cat sh/.status); as_status=$(cat as/.status)
	ok "\$(async-config FILE), run $run: make succeeds with the file's env" \
		sh -c "[ $as_status = 0 ] && grep -qx 'X=WHO=my' as.out || { cat as/err; exit 1; }"
done
variant_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := my.yaml
load @PLUGIN@
X := $(FN echo WHO=$$WHO)
$(info X=$(X))
all: ; @:
EOF2
for run in 1 2 3; do
	(cd as && run_make; echo "$make_status" >.status); cp as/out as.out
	as_status=$(cat as/.status)
	ok "ASYNC_COMPILE_CONFIG in the makefile, run $run: the file's env" \
		sh -c "[ $as_status = 0 ] && grep -qx 'X=WHO=my' as.out || { cat as/err; exit 1; }"
done
rm -rf sh/* as/*

# -- items 6-8: the cache (and speculation) see what a command really ran
cfg() {
	for d in sh as; do
		{ [ -n "$cfgline" ] && echo "$cfgline"; echo "cache: $1"; } >$d/c.yaml
	done
}
for cache in true false; do
	cfg $cache
	mkdir -p sh/sub as/sub sh/early as/early
	variant_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
TOOL := $(FN cd sub && ./tool)
CC_OK := $(FN $(CC) -c -x c /dev/null -o /dev/null 2>/dev/null && echo yes || echo no)
HDR := $(FN $(CC) -E -P -x c probe.c 2>/dev/null | tr -d ' ')
$(info TOOL=$(TOOL) CC_OK=$(CC_OK) HDR=$(HDR))
all: ; @:
EOF2
	both sh -c 'printf "#!/bin/sh\necho tool-v1\n" >sub/tool && chmod +x sub/tool'
	both sh -c 'printf "#include \"conf.h\"\nVALUE\n" >probe.c && echo "#define VALUE one" >conf.h'
	run_cached() {
		for d in sh as; do
			(cd $d && PATH=$TRASH/$d/early:$PATH run_make; echo "$make_status" >.status)
			cp $d/out $d.out; cp $d/err $d.err
		done
		sh_status=$(cat sh/.status); as_status=$(cat as/.status)
	}
	run_cached
	run_cached
	ok "cache $cache: warm run, the same as \$(shell)" same_answers
	both sh -c 'printf "#!/bin/sh\necho tool-v2\n" >sub/tool'
	run_cached
	ok "cache $cache: a program run behind a cd changed: its new answer" \
		expect_grep 'TOOL=tool-v2' as.out
	both sh -c 'echo "#define VALUE two" >conf.h'
	run_cached
	ok "cache $cache: a header the probe reads changed: its new answer" \
		expect_grep 'HDR=two' as.out
	both sh -c 'printf "#!/bin/sh\nexit 1\n" >early/as && chmod +x early/as'
	run_cached
	ok "cache $cache: a new 'as' earlier on PATH, behind the same compiler driver" \
		expect_grep 'CC_OK=no' as.out
	ok "cache $cache: every answer the same as \$(shell)" same_answers
	rm -rf sh/* as/*
done

# -- item 7: a command that made a directory is not cached
cfg true
variant_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
$(info $(FN mkdir -p build/obj && echo made))
all: ; @touch build/obj/x.o
clean: ; @rm -rf build
EOF2
run_both
run_both clean
run_both
ok "cache true: a command that made a directory runs again after a clean" \
	sh -c '[ -f as/build/obj/x.o ] && [ "$0" = 0 ]' "$as_status"
ok "and gives the same as \$(shell)" same_answers

# -- item 9: the environment $(shell) gives, under each make: the
# makefile's exports, and a sub-make's own MAKELEVEL and MAKEFLAGS
variant_mk sub.mk <<'EOF2'
load @PLUGIN@
export FOO = bar
E := $(FN env | grep -E '^(FOO|MAKELEVEL|MAKEFLAGS)=' | sort | tr '\n' ' ')
$(info E=$(E))
all: ; @:
EOF2
for d in sh as; do
	printf 'all: ; @$(MAKE) -s -f sub.mk V=1\n' >$d/Makefile
done
run_both
run_both
ok "a sub-make's environment (exports, MAKELEVEL, MAKEFLAGS): \$(shell)'s" same_answers
ok "and the exported variable is there as \$(shell) has it (or not)" \
	sh -c 'grep "^E=" sh.out >/dev/null && [ "$(grep "^E=" sh.out)" = "$(grep "^E=" as.out)" ]'
rm -rf sh/* as/*

done_testing
