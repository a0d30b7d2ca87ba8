#!/bin/sh
# asynccompile-kbuild.mk read through MAKEFILES: a Kbuild-shaped tree
# (scripts/Kbuild.include, Linux's try-run family, BusyBox's $(shell)
# cc-option) gets Kbuild's answers through async-shell, speculated and
# cached; a makefile that is not Kbuild, one with its own try-run
# included, gives exactly what it gives without the fragment; a missing
# or unloadable plugin leaves the build as it is, with one line.
. "$(dirname "$0")/lib.sh"

# The fragment finds the plugin next to itself, and the plugin its worker
# next to itself: a directory laid out as the build tree is.
FRAG=$TRASH/frag
mkdir "$FRAG"
cp "$TEST_ROOT/asynccompile-kbuild.mk" "$FRAG/"
ln -s "$ASYNC_PLUGIN" "$FRAG/asynccompile.so"
ln -s "$TEST_ROOT/worker" "$FRAG/worker"

# A compiler that rejects flags with "bad" in them and writes nothing.
cat >fakecc <<EOF2
#!/bin/sh
for a; do [ "\$a" = - ] && cat >/dev/null; done
for a; do case \$a in -fbad*|-Wbad*|-Wno-bad*|-Wa,-bad*|--bad*) exit 1;; esac; done
exit 0
EOF2
chmod +x fakecc

# A Kbuild-shaped tree: Linux 6.1's probe macros, word for word, in
# scripts/Makefile.compiler; BusyBox's own $(shell) cc-option in a second
# tree.  KBUILD_EXTMOD puts try-run's scratch directory in a module's
# directory, as `make M=DIR` does (mkdir -p then tries DIR itself).
mkdir -p linux/scripts mod busybox/scripts
: >linux/scripts/Kbuild.include
cat >linux/scripts/Makefile.compiler <<'EOF2'
TMPOUT = $(if $(KBUILD_EXTMOD),$(firstword $(KBUILD_EXTMOD))/).tmp_$$$$
try-run = $(shell set -e;		\
	TMP=$(TMPOUT)/tmp;		\
	trap "rm -rf $(TMPOUT)" EXIT;	\
	mkdir -p $(TMPOUT);		\
	if ($(1)) >/dev/null 2>&1;	\
	then echo "$(2)";		\
	else echo "$(3)";		\
	fi)
as-option = $(call try-run,\
	$(CC) -Werror $(KBUILD_CPPFLAGS) $(KBUILD_AFLAGS) $(1) -c -x assembler-with-cpp /dev/null -o "$$TMP",$(1),$(2))
as-instr = $(call try-run,\
	printf "%b\n" "$(1)" | $(CC) -Werror $(CLANG_FLAGS) $(KBUILD_AFLAGS) -c -x assembler-with-cpp -o "$$TMP" -,$(2),$(3))
__cc-option = $(call try-run,\
	$(1) -Werror $(2) $(3) -c -x c /dev/null -o "$$TMP",$(3),$(4))
cc-option = $(call __cc-option, $(CC),\
	$(KBUILD_CPPFLAGS) $(KBUILD_CFLAGS),$(1),$(2))
cc-option-yn = $(call try-run,\
	$(CC) -Werror $(KBUILD_CPPFLAGS) $(KBUILD_CFLAGS) $(1) -c -x c /dev/null -o "$$TMP",y,n)
cc-disable-warning = $(call try-run,\
	$(CC) -Werror $(KBUILD_CPPFLAGS) $(KBUILD_CFLAGS) -W$(strip $(1)) -c -x c /dev/null -o "$$TMP",-Wno-$(strip $(1)))
ld-option = $(call try-run, $(LD) $(KBUILD_LDFLAGS) $(1) -v,$(1),$(2),$(3))
EOF2
cat >linux/Makefile <<EOF2
include scripts/Kbuild.include
include scripts/Makefile.compiler
CC := $TRASH/fakecc
LD := $TRASH/fakecc
comma := ,
KBUILD_CFLAGS := -O2
KBUILD_CFLAGS += \$(call cc-option,-fgood1)
KBUILD_CFLAGS += \$(call cc-option,-fbad1,-falt1)
KBUILD_CFLAGS += \$(call cc-disable-warning,unused)
KBUILD_CFLAGS += \$(call cc-disable-warning,bad2)
YN := \$(call cc-option-yn,-fbad3) \$(call cc-option-yn,-fgood3)
KBUILD_AFLAGS := \$(call as-option,-Wa\$(comma)-good4) \$(call as-instr,movl %eax\$(comma)%ebx,-DHAVE_MOVL,-DNO)
KBUILD_LDFLAGS := \$(call ld-option,--good5,--alt5) \$(call ld-option,--bad5,--alt5)
\$(info flags: \$(strip \$(KBUILD_CFLAGS)) | \$(KBUILD_AFLAGS) | \$(KBUILD_LDFLAGS) | \$(YN))
all: ; @echo \$(if \$(filter undefined,\$(origin async-wait)),stock,\$(async-stats))
EOF2
want='flags: -O2 -fgood1 -falt1 -Wno-unused | -Wa,-good4 -DHAVE_MOVL | --good5 --alt5 | n y'

kbuild_make() { # DIR [make args]: make in DIR through the fragment
	tl_dir=$1; shift
	MAKEFILES=$FRAG/asynccompile-kbuild.mk run_make -C "$tl_dir" --no-print-directory -j2 "$@"
}
stat_of() { # NAME: its value in ./out's $(async-stats) line
	sed -n "s/.* $1=\([0-9]*\) .*/\1/p" out
}

run_make -C linux --no-print-directory -j2
ok "stock: make succeeds" expect_make_ok
ok "stock: the answers" expect_grep "^$want\$" out
ok "stock: it really is stock" expect_grep '^stock$' out
cp out stock.out

kbuild_make linux
ok "fragment, first run: make succeeds" expect_make_ok
ok "fragment, first run: nothing on stderr" expect_eq "" "$(cat err)" "stderr"
ok "fragment, first run: the same answers" expect_grep "^$want\$" out
ok "fragment, first run: 10 probes ran through async-shell" expect_eq 10 "$(stat_of spec_misses)" "spec_misses"
kbuild_make linux
ok "fragment, second run: the same answers" expect_grep "^$want\$" out
ok "fragment, second run: the cache is on by default and answers all 10" \
	expect_eq "10 0" "$(stat_of cache_hits) $(stat_of spec_misses)" "cache_hits spec_misses"

# With the cache off (a configuration file says so), speculation answers.
write_config "cache: false"
kbuild_make linux
kbuild_make linux
ok "cache: false, second run: the same answers" expect_grep "^$want\$" out
ok "cache: false, second run: all 10 answered by speculation" \
	expect_eq "10 10 0" "$(stat_of speculated) $(stat_of spec_hits) $(stat_of spec_misses)" \
	"speculated spec_hits spec_misses"

# make M=DIR: the scratch directory goes into the module's directory, and
# mkdir -p tries that existing directory too: still pure.
kbuild_make linux KBUILD_EXTMOD="$TRASH/mod"
kbuild_make linux KBUILD_EXTMOD="$TRASH/mod"
ok "KBUILD_EXTMOD: the same answers" expect_grep "^$want\$" out
ok "KBUILD_EXTMOD, second run: all 10 answered by speculation" \
	expect_eq "10 0" "$(stat_of spec_hits) $(stat_of spec_misses)" "spec_hits spec_misses"
ok "KBUILD_EXTMOD: no scratch directory is left" expect_eq "" "$(ls -a mod linux | grep '^\.tmp_')"
unset ASYNC_COMPILE_CONFIG
[ -n "${TEST_START_METHOD:-}" ] && export ASYNC_COMPILE_CONFIG="$TRASH/.start.yaml"

# BusyBox: each macro is a $(shell ...) of its own (scripts/Kbuild.include).
cat >busybox/scripts/Kbuild.include <<'EOF2'
cc-option = $(shell if $(CC) $(CFLAGS) $(1) -S -o /dev/null -xc /dev/null \
             > /dev/null 2>&1; then echo "$(1)"; else echo "$(2)"; fi ;)
cc-option-yn = $(shell if $(CC) $(CFLAGS) $(1) -S -o /dev/null -xc /dev/null \
                > /dev/null 2>&1; then echo "y"; else echo "n"; fi;)
EOF2
cat >busybox/Makefile <<EOF2
include scripts/Kbuild.include
CC := $TRASH/fakecc
CFLAGS := \$(call cc-option,-fgood1) \$(call cc-option,-fbad1,-falt1) \$(call cc-option-yn,-fbad2)
\$(info flags: \$(CFLAGS))
all: ; @echo \$(if \$(filter undefined,\$(origin async-wait)),stock,\$(async-stats))
EOF2
kbuild_make busybox
ok "BusyBox-style: make succeeds" expect_make_ok
ok "BusyBox-style: the answers" expect_grep '^flags: -fgood1 -falt1 n$' out
ok "BusyBox-style: 3 probes through async-shell" expect_eq 3 "$(stat_of spec_misses)" "spec_misses"

# A makefile that is not Kbuild: its own try-run (which names $(0)), a
# call that hides the outer call's arguments, Linux's very try-run text,
# an undefined macro and a simple one.  Everything make prints, and its
# exit status, must be what they are without the fragment.
mkdir foreign
cat >foreign/Makefile <<'EOF2'
try-run = $(shell echo "$(0):$(1):$(2):$(3)"; exit 3)
outer = [$(call try-run,a)]
OWN := $(call try-run,x,y)
$(info own: $(OWN) status $(.SHELLSTATUS))
$(info hidden: $(call outer,1,2,3))
$(info undefined: [$(call cc-option,-fx)])
cc-disable-warning := $(1)-simple
$(info simple: [$(call cc-disable-warning,w)])
include linux-try-run.mk
$(info linux text: [$(call as-option,-fx,-fy)] [$(call ld-option,--x)])
all: ; @echo recipe $(call try-run,r)
EOF2
sed -n '/^TMPOUT/,/^\tfi)$/p' linux/scripts/Makefile.compiler >foreign/linux-try-run.mk
cat >>foreign/linux-try-run.mk <<EOF2
as-option = \$(call try-run,$TRASH/fakecc \$(1),\$(1),\$(2))
ld-option = \$(call try-run,$TRASH/fakecc \$(1) --bad,\$(1),\$(2))
EOF2
run_make -C foreign --no-print-directory --warn-undefined-variables
mv out foreign.out; mv err foreign.err; foreign_status=$make_status
XDG_CACHE_HOME=$TRASH/foreign-store kbuild_make foreign --warn-undefined-variables
ok "not Kbuild: the same exit status" expect_eq "$foreign_status" "$make_status" "exit status"
ok "not Kbuild: the same output" expect_eq "$(cat foreign.out)" "$(cat out)" "stdout"
ok "not Kbuild: the same messages" expect_eq "$(cat foreign.err)" "$(cat err)" "stderr"
ok "not Kbuild: the answers are the makefile's own" \
	expect_grep "^own: try-run:x:y: status \$" out
ok "not Kbuild: nothing is kept for it" expect_eq "" "$(ls "$TRASH/foreign-store" 2>/dev/null)" "store"

# The plugin missing, then unloadable: the build as without the fragment,
# and one line from the top-level make only (a sub-make reads MAKEFILES
# too).
mkdir lost
cp "$TEST_ROOT/asynccompile-kbuild.mk" lost/
printf 'all: ; @$(MAKE) --no-print-directory -C linux\n' >top.mk
lost_plugin() { # what, the reason the fragment's line gives
	MAKEFILES=$TRASH/lost/asynccompile-kbuild.mk run_make -f top.mk
	ok "$1 plugin: make succeeds" expect_make_ok
	ok "$1 plugin: stock answers" expect_eq "$(cat stock.out)" "$(cat out)" "stdout"
	ok "$1 plugin: one line says why" \
		expect_eq "lost/asynccompile-kbuild.mk:34: asynccompile-kbuild.mk: $TRASH/lost/asynccompile.so $2: building without it" \
		"$(sed "s|^$TRASH/||" err)" "stderr"
}
lost_plugin missing "does not exist"
echo 'not an object' >lost/asynccompile.so
lost_plugin unloadable "could not be loaded"

done_testing
