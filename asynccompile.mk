# asynccompile.mk - batch versions of the Kbuild probe macros.
#
# Kbuild's cc-option, cc-disable-warning, as-instr and ld-option each run
# the compiler through $(shell) and block until it exits.  A makefile with
# twenty probes pays for twenty compiler start-ups one after another.
# The macros here split every probe in two: a DECLARE step queues it with
# $(async-try ...) and returns at once, and a RESULT step reads the answer.
# Declare all probes first, wait once, then read the results: the probes
# run in the asynccompile pool side by side, within make's -jN budget
# (so `make` with no -j still runs them one at a time, only without
# blocking make in between; `make -j8` runs eight at once).
#
#     load $(shell pkg-config --variable=plugin asynccompile)
#     include $(shell pkg-config --variable=helpers asynccompile)
#
#     $(call async-cc-option,-fstack-protector-strong)
#     $(call async-cc-disable-warning,unused-parameter)
#     $(call async-as-instr,endbr64)
#     $(call async-ld-option,--build-id)
#     $(async-probes-wait)
#
#     CFLAGS := -O2 $(call cc-option-result,-fstack-protector-strong,-fstack-protector)
#     CFLAGS += $(call cc-disable-warning-result,unused-parameter)
#     CFLAGS += $(call as-instr-result,endbr64,-DHAVE_AS_ENDBR64)
#     LDFLAGS := $(addprefix -Wl$(comma),$(call ld-option-result,--build-id))
#
# With gcc 12 and binutils 2.40 on x86_64 this gives
#     CFLAGS = -O2 -fstack-protector-strong -Wno-unused-parameter -DHAVE_AS_ENDBR64
#     LDFLAGS = -Wl,--build-id
#
# Declare macros (each expands to nothing):
#
#   $(call async-cc-option,FLAG)       can $(CC) compile with FLAG?
#   $(call async-cc-options,FLAG ...)  one async-cc-option per word
#   $(call async-cc-disable-warning,W) does $(CC) know -WW?  (gcc accepts any
#                                      -Wno-W silently, so the positive
#                                      form is what gets probed, as Kbuild does)
#   $(call async-as-instr,INSTR)       does the assembler take INSTR?
#   $(call async-as-option,FLAG)       does $(CC) assemble with FLAG?
#   $(call async-ld-option,FLAG)       does $(LD) accept FLAG?
#
# Wait:
#
#   $(async-probes-wait)               collect every probe declared so far;
#                                      $(call async-probes-wait) works too.
#                                      Only this file's probes are waited
#                                      for, so it can sit between your own
#                                      $(async-compile) calls and their wait.
#
# Result macros (the same arguments as the Kbuild macro of the same stem):
#
#   $(call cc-option-result,FLAG[,FALLBACK])
#        FLAG if $(CC) accepted it, else FALLBACK (else nothing).
#        $(call cc-option-result,-fstack-protector-strong,-fstack-protector)
#        -> -fstack-protector-strong
#   $(call cc-options-result,FLAG ...)
#        the words $(CC) accepted, in order.
#        $(call cc-options-result,-Wall -fno-such-flag -Wextra) -> -Wall -Wextra
#   $(call cc-option-yn-result,FLAG)
#        y or n.
#   $(call cc-disable-warning-result,WARNING)
#        -Wno-WARNING if $(CC) knows -WWARNING, else nothing.
#        $(call cc-disable-warning-result,unused-parameter) -> -Wno-unused-parameter
#   $(call as-instr-result,INSTR,IF-OK[,ELSE])
#        IF-OK if the assembler took INSTR, else ELSE.  Write commas as
#        $(comma) and separate lines with \n, as for Kbuild's as-instr:
#        $(call as-instr-result,movl %eax$(comma)%ebx,-DHAVE_MOVL) -> -DHAVE_MOVL
#   $(call as-option-result,FLAG[,FALLBACK])
#   $(call ld-option-result,FLAG[,FALLBACK])
#        $(call ld-option-result,--build-id) -> --build-id
#
# A result macro whose probe is still running waits for all pending
# probes, and one whose probe was never declared declares it and waits, so
# forgetting a declare or the wait costs time, never correctness.  Each
# probe runs once per make run: declaring it again, or asking for its
# result again, reuses the first answer.  That cache is keyed on the probe
# kind and FLAG only, so set CC and the hooks below before the first
# declare.
#
# Hooks, read when a probe is queued (all empty by default):
#
#   ASYNC_COMPILE_PROBE_CFLAGS   added to every cc probe, as Kbuild adds
#                                KBUILD_CPPFLAGS and KBUILD_CFLAGS: put flags
#                                here that change what the compiler accepts
#                                (-m32, -std=, -fsanitize=).  Leave -MD/-MMD
#                                out: the probe writes to /dev/null.
#   ASYNC_COMPILE_PROBE_AFLAGS   added to every as-instr and as-option probe.
#   ASYNC_COMPILE_PROBE_LDFLAGS  added to every ld-option probe.
#
# The commands, the ones Kbuild runs:
#
#   cc-option  $(CC) -Werror $(ASYNC_COMPILE_PROBE_CFLAGS) FLAG -c -x c /dev/null -o /dev/null
#   as-instr   $(CC) -Werror $(ASYNC_COMPILE_PROBE_AFLAGS) -Wa,--fatal-warnings
#                  -c -x assembler-with-cpp -o /dev/null -   (INSTR on stdin)
#   as-option  $(CC) -Werror $(ASYNC_COMPILE_PROBE_AFLAGS) FLAG -c -x assembler-with-cpp
#                  /dev/null -o /dev/null
#   ld-option  $(LD) $(ASYNC_COMPILE_PROBE_LDFLAGS) FLAG -v
#
# Each command starts with the tool it probes, so a config `launcher:`
# such as [ccache] or [distcc] (which the plugin puts in front of every
# job, probes included) keeps working: both run a command that is not a
# cacheable or distributable compile locally, unchanged.  ld-option asks
# ld to parse FLAG and print its version (what Kbuild does today): an
# unknown option fails, but the value of a known one (--build-id=junk) is
# only checked when ld really links.
#
# The file defines `comma` (a literal comma, for flags such as
# -Wa$(comma)--noexecstack) unless the makefile already has one.
#
# Without the plugin (no `load`, or a make without load support) every
# probe runs at once through $(shell), one after another, with the same
# results; the file is safe to include everywhere.
#
# Probes are asynccompile jobs named acp.KIND.FLAG, with FLAG
# percent-encoded (% blank : # = $ , ( ) become %25 %20 %3A %23 %3D %24
# %2C %28 %29) because job names may not contain those characters.  The
# job's variables (acp.cc.-fstack-protector-strong.status and so on) are
# there for debugging; use the result macros.  Everything else in this
# file whose name starts with acp is private.

ifndef acp-included
acp-included := 1

CC ?= cc
LD ?= ld
ASYNC_COMPILE_PROBE_CFLAGS ?=
ASYNC_COMPILE_PROBE_AFLAGS ?=
ASYNC_COMPILE_PROBE_LDFLAGS ?=

acp-empty :=
acp-space := $(acp-empty) $(acp-empty)
acp-tab := $(acp-empty)	$(acp-empty)
acp-comma := ,
acp-hash := \#
acp-dollar := $$
acp-lparen := (
acp-rparen := )
acp-quote := '
define acp-newline


endef
comma ?= ,

# Job names: KIND and a reversible encoding of the stripped key.
acp-enc = $(subst $(acp-space),%20,$(subst $(acp-comma),%2C,$(subst =,%3D,$(subst :,%3A,$(subst \
	$(acp-hash),%23,$(subst $(acp-dollar),%24,$(subst $(acp-lparen),%28,$(subst \
	$(acp-rparen),%29,$(subst %,%25,$(strip $1))))))))))
acp-name = acp.$1.$(call acp-enc,$2)

# The probe commands, one per kind; acp-in-KIND is the standard input of
# kinds that read one.
acp-cmd-cc = $(CC) -Werror $(ASYNC_COMPILE_PROBE_CFLAGS) $(strip $1) -c -x c /dev/null -o /dev/null
acp-cmd-as = $(CC) -Werror $(ASYNC_COMPILE_PROBE_AFLAGS) -Wa$(acp-comma)--fatal-warnings \
	-c -x assembler-with-cpp -o /dev/null -
acp-in-as = $(subst \t,$(acp-tab),$(subst \n,$(acp-newline),$(strip $1)))$(acp-newline)
acp-cmd-asopt = $(CC) -Werror $(ASYNC_COMPILE_PROBE_AFLAGS) $(strip $1) \
	-c -x assembler-with-cpp /dev/null -o /dev/null
acp-cmd-ld = $(LD) $(ASYNC_COMPILE_PROBE_LDFLAGS) $(strip $1) -v

# The plugin defines the variable async-wait when it is loaded.
acp-plugin = $(filter-out undefined,$(origin async-wait))

# $(call acp-queue,KIND,KEY): start the probe unless it already was.  The
# command is built only here, so a hook that refers back to a variable
# holding result macros is not expanded on every lookup.
acp-queue = $(call acp-queue-name,$(call acp-name,$1,$2),$1,$2)
acp-queue-name = $(if $(acp-seen.$1),,$(eval acp-seen.$1 := 1)$(if \
	$(acp-plugin),$(call acp-try,$1,$(call acp-cmd-$2,$3),$(call acp-in-$2,$3)),$(call \
	acp-serial,$1,$(call acp-cmd-$2,$3),$(if $(filter as,$2),$3))))
acp-try = $(eval acp-pending += $1)$(if $3,$(async-try $1,$2,$3),$(async-try $1,$2))

# Without the plugin: run it now.  $(shell) drops newlines from its
# command, so the standard input is rebuilt by printf's %b from the \n
# escapes of the key instead.
acp-serial = $(eval $1.status := $(shell $(if $3,printf '%b\n' '$(call \
	acp-squote,$(strip $3))' |,exec </dev/null;) ($2) >/dev/null 2>&1; echo $$?))
acp-squote = $(subst $(acp-quote),$(acp-quote)\$(acp-quote)$(acp-quote),$1)

# Collect the pending probes that nobody collected yet (a plain
# $(async-wait) may have); an empty name list would wait for every job.
# A wait gives NAME.status a simple value; until then the plugin's
# stands-in is recursive (and reading it is an error).
async-probes-wait = $(call acp-wait-names,$(strip $(foreach acp_n,$(acp-pending),$(if \
	$(call acp-waited,$(acp_n)),,$(acp_n)))))$(eval acp-pending :=)
acp-waited = $(filter simple,$(flavor $1.status))
acp-wait-names = $(if $1,$(async-wait $1))

# $(call acp-passed,KIND,KEY): non-empty when the probe exited 0.
acp-passed = $(call acp-queue,$1,$2)$(call acp-status-ok,$(call acp-name,$1,$2))
acp-status-ok = $(if $(call acp-waited,$1),,$(async-probes-wait))$(filter 0,$($1.status))

async-cc-option = $(call acp-queue,cc,$1)
async-cc-options = $(foreach acp_f,$1,$(call acp-queue,cc,$(acp_f)))
async-cc-disable-warning = $(call acp-queue,cc,-W$(strip $1))
async-as-instr = $(call acp-queue,as,$1)
async-as-option = $(call acp-queue,asopt,$1)
async-ld-option = $(call acp-queue,ld,$1)

cc-option-result = $(if $(call acp-passed,cc,$1),$(strip $1),$(strip $2))
cc-options-result = $(strip $(foreach acp_f,$1,$(if $(call acp-passed,cc,$(acp_f)),$(acp_f))))
cc-option-yn-result = $(if $(call acp-passed,cc,$1),y,n)
cc-disable-warning-result = $(if $(call acp-passed,cc,-W$(strip $1)),-Wno-$(strip $1))
as-instr-result = $(if $(call acp-passed,as,$1),$(strip $2),$(strip $3))
as-option-result = $(if $(call acp-passed,asopt,$1),$(strip $1),$(strip $2))
ld-option-result = $(if $(call acp-passed,ld,$1),$(strip $1),$(strip $2))

# ---- Kbuild's own macros, as drop-ins ----
#
# try-run, cc-option, cc-option-yn, cc-disable-warning, as-option,
# as-instr and ld-option, with Kbuild's names, arguments, commands and
# results, one probe at a time inline, as Kbuild's makefiles call them:
#
#     cflags-y += $(call cc-option,-march=winchip-c6,-march=i586)
#
# With the plugin loaded they run through $(async-shell), so the next run
# of the same makefiles starts every probe ahead of need (asynccompile(7):
# "DROP-IN PROBES"); without it, through $(shell).  Each is
# defined only if the makefile has not defined it before the include.
# The flags added are Kbuild's: KBUILD_CPPFLAGS and KBUILD_CFLAGS (cc),
# KBUILD_AFLAGS (as, plus CLANG_FLAGS for as-instr), KBUILD_LDFLAGS (ld),
# where the makefile defines them; the scratch directory is $(TMPOUT), or
# .tmp_$$$$ (one per probe shell) without it.

acp-var = $(if $(filter undefined,$(origin $1)),,$($1))
acp-tmpout = $(if $(filter undefined,$(origin TMPOUT)),.tmp_$$$$,$(TMPOUT))
acp-shell = $(if $(acp-plugin),$(async-shell $1),$(shell $1))

try-run ?= $(call acp-shell,set -e; TMP=$(acp-tmpout)/tmp; \
	trap "rm -rf $(acp-tmpout)" EXIT; mkdir -p $(acp-tmpout); \
	if ($(1)) >/dev/null 2>&1; then echo "$(2)"; else echo "$(3)"; fi)
as-option ?= $(call try-run,$(CC) -Werror $(call acp-var,KBUILD_CPPFLAGS) \
	$(call acp-var,KBUILD_AFLAGS) $(1) -c -x assembler-with-cpp /dev/null -o "$$TMP",$(1),$(2))
as-instr ?= $(call try-run,printf "%b\n" "$(1)" | $(CC) -Werror $(call acp-var,CLANG_FLAGS) \
	$(call acp-var,KBUILD_AFLAGS) -Wa$(acp-comma)--fatal-warnings -c -x assembler-with-cpp \
	-o "$$TMP" -,$(2),$(3))
__cc-option ?= $(call try-run,$(1) -Werror $(2) $(3:-Wno-%=-W%) -c -x c /dev/null -o "$$TMP",$(3),$(4))
cc-option ?= $(call __cc-option,$(CC),$(call acp-var,KBUILD_CPPFLAGS) $(call acp-var,KBUILD_CFLAGS),$(1),$(2))
cc-option-yn ?= $(if $(call cc-option,$1),y,n)
cc-disable-warning ?= $(if $(call cc-option,-W$(strip $1)),-Wno-$(strip $1))
ld-option ?= $(call try-run,$(LD) $(call acp-var,KBUILD_LDFLAGS) $(1) -v,$(1),$(2),$(3))

endif
