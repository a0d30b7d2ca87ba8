# asynccompile - a GNU Make loadable object that runs compile jobs in a
# persistent worker pool inside the -jN budget.  See README, INSTALL and
# man/.

PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib
# where asynccompile.so goes: a distribution puts it in a directory of its
# own (debian/rules: $(LIBDIR)/asynccompile), as a library directory's
# shared objects are libraries with a SONAME
PLUGINDIR = $(LIBDIR)
LIBEXECDIR = $(PREFIX)/libexec
DATADIR = $(PREFIX)/share
MANDIR = $(DATADIR)/man
PKGCONFIGDIR = $(LIBDIR)/pkgconfig
INSTALL = install

CC = cc
CFLAGS = -O2 -g
WARN = -std=c11 -Wall -Wextra -Wshadow -Wmissing-prototypes
# Warnings are errors in CI (.ci/run exports WERROR=-Werror), not for users,
# whose newer compiler may warn about something new.
WERROR ?=
PKG_CONFIG = pkg-config
YAML_CFLAGS := $(shell $(PKG_CONFIG) --cflags yaml-0.1 2>/dev/null)
YAML_LIBS := $(shell $(PKG_CONFIG) --libs yaml-0.1 2>/dev/null || echo -lyaml)
# The plugin links libyaml's archive when there is one (YAML_STATIC=auto):
# make then maps one shared object less at every load (about 0.1 ms of
# the 0.5 ms a load may cost, bench workload 7), and its symbols stay
# hidden.  YAML_STATIC=no links libyaml.so, as distributions want
# (debian/rules sets it).
YAML_STATIC = auto
ifeq ($(filter auto no,$(YAML_STATIC)),)
$(error YAML_STATIC=$(YAML_STATIC): say auto (libyaml.a when there is one) or no (libyaml.so))
endif
comma := ,
YAML_ARCHIVE := $(if $(filter auto,$(YAML_STATIC)),$(shell $(CC) -print-file-name=libyaml.a 2>/dev/null))
PLUGIN_YAML_LIBS = $(if $(filter /%,$(YAML_ARCHIVE)),$(YAML_ARCHIVE) -Wl$(comma)--exclude-libs$(comma)libyaml.a,$(YAML_LIBS))

ALL_CFLAGS = $(WARN) $(WERROR) -D_GNU_SOURCE -fPIC -fvisibility=hidden -pthread -I. \
	-DASYNC_LIBEXECDIR='"$(LIBEXECDIR)/asynccompile"' \
	$(YAML_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
ALL_LDFLAGS = -pthread $(LDFLAGS) $(EXTRA_LDFLAGS)

# The folders say where code runs (README, "Development", and each
# folder's README):
#   lib/     every process: the plugin, the supervisor, the workers
#   answer/  make's thread and the asynccompile command: the answer
#            cache (lib/ includes none of it)
#   pool/    the pool: in the supervisor, or in make's I/O thread
#   worker/  a worker or supervisor process (also forked from make)
#   config/  wherever the YAML file is read
#   plugin/  inside make
#   trace/   preloaded into a traced command's processes
#   cli/     the asynccompile command, the user's (its options also
#            behind the worker's maintenance options)
# Everything but plugin/ and the programs' main.c is one archive: each
# program links only the members it reaches (the plugin none of the
# supervisor's, nor the config dumper's).  Includes name their folder
# ("lib/buf.h").
CORE_DIRS = lib answer pool worker config cli
MAIN_SRC = worker/main.c cli/main.c
CORE_SRC = $(filter-out $(MAIN_SRC),$(wildcard $(CORE_DIRS:=/*.c)))
PLUGIN_SRC = $(wildcard plugin/*.c)
CORE_OBJ = $(CORE_SRC:.c=.o)
CORE_LIB = build/libcore.a
PLUGIN_OBJ = $(PLUGIN_SRC:.c=.o)
HEADERS = $(wildcard $(CORE_DIRS:=/*.h) plugin/*.h)
# Every object is rebuilt when the flags or the install paths change.
FLAGS_STAMP = build/FLAGS

PLUGIN = asynccompile.so
WORKER = worker/asynccompile-worker
CLI = cli/asynccompile
# The tracer (lib/tracelog.h): preloaded into every process of a traced
# command, so never built with sanitizers, and exporting only its hooks.
TRACER = trace/asynccompile-trace.so
TRACER_CFLAGS = $(WARN) $(WERROR) -D_GNU_SOURCE -fPIC -fvisibility=hidden -pthread \
	-I. $(CPPFLAGS) $(CFLAGS)
UNIT_SRC = $(wildcard t/unit/*.c)
UNIT = $(UNIT_SRC:.c=.t)

# Make implementations the suite runs against; the CI script builds 4.4.1.
MAKE44 = $(abspath $(firstword $(wildcard build/make-4.4.1/make)))
TEST_MAKES = $(shell command -v make) $(MAKE44)

all: $(PLUGIN) $(WORKER) $(CLI) $(TRACER)

# A fresh machine says what it lacks, in one line, before any compiler
# error: the C compiler and libyaml's header, looked for the way the
# build will.  Only when everything is about to be built (new flags, a
# fresh clone, or clean among the goals), and not for goals that build
# nothing; about 20 ms.  YAML_HEADER=nope.h shows the message in a
# fresh clone (t0002 tests it).
YAML_HEADER = yaml.h
BUILD_DEPS = build-essential pkg-config libyaml-dev
NO_BUILD_GOALS = clean uninstall check-man
define probe_build_deps
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(NO_BUILD_GOALS),$(MAKECMDGOALS)),all),)
ifeq ($(shell printf '\043include <$(YAML_HEADER)>\n' | $(CC) $(YAML_CFLAGS) $(CPPFLAGS) -E -x c - -o /dev/null 2>/dev/null && echo ok),)
$(error no C compiler or no $(YAML_HEADER) (libyaml): on Debian, apt-get install $(BUILD_DEPS))
endif
endif
endef

# Rewritten (so newer than every object) only when the flags differ from
# the last build's; read and written while make parses, so `make -q` sees
# an up-to-date tree as one.  Variant builds (build.mk) keep their own.
ifndef VARIANT
FLAGS_NOW := $(strip $(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(YAML_LIBS) $(PLUGIN_YAML_LIBS))
ifneq ($(filter clean,$(MAKECMDGOALS)),)
$(eval $(value probe_build_deps))
else ifneq ($(file <$(FLAGS_STAMP)),$(FLAGS_NOW))
$(eval $(value probe_build_deps))
endif
ifneq ($(file <$(FLAGS_STAMP)),$(FLAGS_NOW))
$(shell mkdir -p $(dir $(FLAGS_STAMP)))
$(file >$(FLAGS_STAMP),$(FLAGS_NOW))
endif
endif

%.o: %.c $(HEADERS) $(FLAGS_STAMP)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $(CORE_OBJ)

$(PLUGIN): $(PLUGIN_OBJ) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $(PLUGIN_OBJ) $(CORE_LIB) $(ALL_LDFLAGS) $(PLUGIN_YAML_LIBS)

$(WORKER): worker/main.o $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -o $@ worker/main.o $(CORE_LIB) $(ALL_LDFLAGS) $(YAML_LIBS)

$(CLI): cli/main.o $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -o $@ cli/main.o $(CORE_LIB) $(ALL_LDFLAGS) $(YAML_LIBS)

TRACER_SRC = $(wildcard trace/*.c)
# The generic hooks (trace/classes.c), one line per opaque or impure
# function of trace/libc.classes: TR_CLASS(name, class, "version" or "").
TRACE_CLASSES_H = build/trace-classes.h
# The real-function slots (trace/trace.h, defined once in emit.c), one
# line per model function of trace/libc.classes and per @real line:
# TR_SLOT(name).
TRACE_SLOTS_H = build/trace-slots.h
TRACER_DEPS = $(TRACER_SRC) $(wildcard trace/*.h) lib/tracelog.h $(TRACE_CLASSES_H) \
	$(TRACE_SLOTS_H) $(FLAGS_STAMP)
$(TRACER): $(TRACER_DEPS)
	$(CC) $(TRACER_CFLAGS) -shared -o $@ $(TRACER_SRC) $(LDFLAGS) -ldl

$(TRACE_CLASSES_H): trace/libc.classes Makefile
	@mkdir -p $(dir $@)
	awk '{ sub(/#.*/, "") } \
	$$1 == "@libc" { printf "#ifndef TR_LIBC_CLASSIFIED\n#define TR_LIBC_CLASSIFIED \"%s\"\n#endif\n", $$2 } \
	$$2 == "opaque" || $$2 == "impure" { \
		printf "TR_CLASS(%s, TR_%s, %s)\n", $$1, toupper($$2), \
			$$3 ~ /^@/ ? "\"" substr($$3, 2) "\"" : "\"\"" }' $< > $@.tmp
	mv $@.tmp $@

$(TRACE_SLOTS_H): trace/libc.classes Makefile
	@mkdir -p $(dir $@)
	awk '{ sub(/#.*/, "") } \
	$$2 == "model" && $$3 ~ /^@/ { printf "#error \"%s: a model hook binds the default version\"\n", $$1 } \
	$$2 == "model" { print "TR_SLOT(" $$1 ")" } \
	$$1 == "@real" { real = real "TR_SLOT(" $$2 ")\n" } \
	END { printf "%s", real }' $< > $@.tmp
	mv $@.tmp $@

# The tracer as it behaves on a C library its list was not made for (test-trace).
TRACER_OTHER_LIBC = build/trace-other-libc.so
$(TRACER_OTHER_LIBC): $(TRACER_DEPS)
	$(CC) $(TRACER_CFLAGS) -DTR_LIBC_CLASSIFIED='"0.0"' -shared -o $@ $(TRACER_SRC) $(LDFLAGS) -ldl

# Unit tests link what they test from the plugin too (no test includes a .c).
UNIT_PLUGIN_OBJ = plugin/js.o plugin/children.o plugin/waitsock.o
t/unit/%.t: t/unit/%.c t/unit/tap.h t/unit/corpus.h $(UNIT_PLUGIN_OBJ) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(UNIT_PLUGIN_OBJ) $(CORE_LIB) $(ALL_LDFLAGS) $(YAML_LIBS)

t/helpers/%: t/helpers/%.c $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(CORE_LIB) $(ALL_LDFLAGS) $(YAML_LIBS)

TEST_HELPERS = $(patsubst %.c,%,$(wildcard t/helpers/*.c))
# A cgo program (Go makes its own system calls: t4068), built only where
# the Go toolchain is (Debian: golang-go), offline, its cache in build/;
# t4068 says it skipped the case without it.
GO = $(firstword $(wildcard $(addsuffix /go,$(subst :, ,$(PATH)))))
ifneq ($(GO),)
TEST_HELPERS += t/helpers/goread
endif
t/helpers/goread: t/helpers/goread.go
	GOCACHE=$(CURDIR)/build/gocache GOPATH=$(CURDIR)/build/gopath GO111MODULE=off GOFLAGS= \
		CGO_ENABLED=1 $(GO) build -o $@ $<
t/helpers/rawread t/helpers/jitread: t/helpers/rawsys.h
# the tracer's test preloads the tracer into its probe
t/unit/test-trace.t: $(TRACER) $(TRACER_OTHER_LIBC) t/helpers/trace-probe
# the tracer's vfork snapshot, linked on its own (the tracer is no library to link)
t/unit/test-snap.t: t/unit/test-snap.c trace/snap.c trace/snap.h t/unit/tap.h $(FLAGS_STAMP)
	$(CC) $(ALL_CFLAGS) -o $@ t/unit/test-snap.c trace/snap.c $(ALL_LDFLAGS)

# The plugin with its fault-injection hooks (plugin/fault.h) compiled in,
# for the tests only: the files that use the hooks are built again with
# -DASYNC_FAULTS, the rest is shared with the real plugin.
FAULT_SRC := $(shell grep -l '"plugin/fault.h"' $(PLUGIN_SRC))
FAULT_PLUGIN = build/faults/$(PLUGIN)
build/faults/%.o: %.c $(HEADERS) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DASYNC_FAULTS -c -o $@ $<
$(FAULT_PLUGIN): $(FAULT_SRC:%.c=build/faults/%.o) $(filter-out $(FAULT_SRC:.c=.o),$(PLUGIN_OBJ)) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $^ $(ALL_LDFLAGS) $(PLUGIN_YAML_LIBS)

test-build: all $(UNIT) $(TEST_HELPERS) $(FAULT_PLUGIN)

# The test suite is t/Makefile's (t/README says what each goal runs);
# here, only what each goal needs built before it runs there.
SUITE_GOALS = check check-more check-full check-unit check-makes check-shell \
	check-shell-methods check-make-suite check-asan check-valgrind check-fuzz check-stress
$(SUITE_GOALS): test-build
check-asan check-more check-full: build-asan
check-fuzz check-more check-full: build-fuzz
$(SUITE_GOALS) check-man:
	@$(MAKE) -C t --no-print-directory $@ TEST_MAKES="$(TEST_MAKES)"

# ASan+UBSan and libFuzzer builds of the same sources, out of tree (build.mk)
ASAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
build-asan: test-build
	$(MAKE) -f $(CURDIR)/build.mk VARIANT=asan SRCDIR=$(CURDIR) \
		EXTRA_CFLAGS="$(ASAN_FLAGS) -O1" EXTRA_LDFLAGS="$(ASAN_FLAGS)" variant-build
build-fuzz:
	@if command -v clang >/dev/null 2>&1; then \
		$(MAKE) -f $(CURDIR)/build.mk VARIANT=fuzz SRCDIR=$(CURDIR) CC=clang fuzzers; \
	else echo "build-fuzz: skipped: clang not installed"; fi

# The directories install puts files in.  Those it had to create (parents
# included) are written to INSTALL_RECORD, paths without DESTDIR, so that
# uninstall removes them again when they are empty, and no directory that
# was there before (/usr/local/lib on a fresh system, say).  Empty
# INSTALL_RECORD keeps no record (debian/rules: dpkg owns directories).
INSTALL_DIRS = $(BINDIR) $(PLUGINDIR) $(PKGCONFIGDIR) $(LIBEXECDIR)/asynccompile $(DATADIR)/asynccompile \
	$(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7
INSTALL_RECORD = $(DATADIR)/asynccompile/installed-dirs

install: all
	@set -e; new=; for d in $(INSTALL_DIRS); do \
		while case $$d in /?*) [ ! -d "$(DESTDIR)$$d" ];; *) false;; esac; do \
			new="$$new $$d"; d=$${d%/*}; done; \
	done; \
	echo "$(INSTALL) -d $(addprefix $(DESTDIR),$(INSTALL_DIRS))"; \
	$(INSTALL) -d $(addprefix $(DESTDIR),$(INSTALL_DIRS)); \
	if [ -n "$(INSTALL_RECORD)" ]; then \
		rec="$(DESTDIR)$(INSTALL_RECORD)"; \
		{ [ ! -f "$$rec" ] || cat "$$rec"; printf '%s\n' $$new; } | sed '/^$$/d' | LC_ALL=C sort -u >"$$rec.tmp"; \
		chmod 644 "$$rec.tmp"; mv "$$rec.tmp" "$$rec"; \
		echo "# directories made by install, for uninstall: $$rec"; \
	fi
	$(INSTALL) -m 755 $(PLUGIN) $(DESTDIR)$(PLUGINDIR)/$(PLUGIN)
	$(INSTALL) -m 755 $(WORKER) $(DESTDIR)$(LIBEXECDIR)/asynccompile/asynccompile-worker
	$(INSTALL) -m 755 $(CLI) $(DESTDIR)$(BINDIR)/asynccompile
	$(INSTALL) -m 755 $(TRACER) $(DESTDIR)$(LIBEXECDIR)/asynccompile/asynccompile-trace.so
	sed -e 's|@PREFIX@|$(PREFIX)|;s|@LIBDIR@|$(LIBDIR)|;s|@PLUGINDIR@|$(PLUGINDIR)|;s|@DATADIR@|$(DATADIR)|' \
		asynccompile.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/asynccompile.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/asynccompile.pc
	$(INSTALL) -m 644 asynccompile.mk $(DESTDIR)$(DATADIR)/asynccompile/asynccompile.mk
	# the installed fragment names the installed plugin (the source's looks next to itself)
	sed -e 's|$$(dir $$(lastword $$(MAKEFILE_LIST)))asynccompile.so|$(PLUGINDIR)/$(PLUGIN)|g' \
		asynccompile-kbuild.mk > $(DESTDIR)$(DATADIR)/asynccompile/asynccompile-kbuild.mk
	chmod 644 $(DESTDIR)$(DATADIR)/asynccompile/asynccompile-kbuild.mk
	$(INSTALL) -m 644 man/asynccompile.1 $(DESTDIR)$(MANDIR)/man1/asynccompile.1
	$(INSTALL) -m 644 man/asynccompile-worker.1 $(DESTDIR)$(MANDIR)/man1/asynccompile-worker.1
	$(INSTALL) -m 644 man/asynccompile.yaml.5 $(DESTDIR)$(MANDIR)/man5/asynccompile.yaml.5
	$(INSTALL) -m 644 man/asynccompile.7 $(DESTDIR)$(MANDIR)/man7/asynccompile.7

# The files (and asynccompile.mk where installs before 0.1's package put
# it, $(PREFIX)/include), then the directories install made (deepest
# first: a path sorts after its parent), each only if empty; the
# asynccompile directories under LIBEXECDIR and DATADIR are ours with or
# without a record.
uninstall:
	rm -f $(DESTDIR)$(PLUGINDIR)/$(PLUGIN) $(DESTDIR)$(PREFIX)/include/asynccompile.mk \
		$(DESTDIR)$(LIBEXECDIR)/asynccompile/asynccompile-worker \
		$(DESTDIR)$(LIBEXECDIR)/asynccompile/asynccompile-trace.so \
		$(DESTDIR)$(BINDIR)/asynccompile \
		$(DESTDIR)$(PKGCONFIGDIR)/asynccompile.pc \
		$(DESTDIR)$(DATADIR)/asynccompile/asynccompile.mk \
		$(DESTDIR)$(DATADIR)/asynccompile/asynccompile-kbuild.mk \
		$(DESTDIR)$(MANDIR)/man1/asynccompile.1 \
		$(DESTDIR)$(MANDIR)/man1/asynccompile-worker.1 \
		$(DESTDIR)$(MANDIR)/man5/asynccompile.yaml.5 \
		$(DESTDIR)$(MANDIR)/man7/asynccompile.7
	@set -e; dirs="$(LIBEXECDIR)/asynccompile $(DATADIR)/asynccompile"; \
	rec="$(DESTDIR)$(INSTALL_RECORD)"; \
	if [ -n "$(INSTALL_RECORD)" ] && [ -f "$$rec" ]; then \
		dirs="$$dirs $$(cat "$$rec")"; rm -f "$$rec"; fi; \
	for d in $$(printf '%s\n' $$dirs | LC_ALL=C sort -ru); do \
		if [ -d "$(DESTDIR)$$d" ] && rmdir "$(DESTDIR)$$d" 2>/dev/null; then \
			echo "rmdir $(DESTDIR)$$d"; fi; \
	done

demo: all
	$(MAKE) --no-print-directory -C examples/demo ASYNC_COMPILE_PLUGIN=$(CURDIR)/$(PLUGIN)
	@echo
	@sh examples/demo/compare.sh "$(MAKE)" $(CURDIR)/$(PLUGIN)

bench: all
	sh bench/run.sh

# Everything the build, the suite, `make demo` and .ci/deb-build.sh (the
# package, in build/deb) make; build/make-4.4.1 is the CI script's, not
# the build's.  The demo's files are removed here,
# not by its own clean, which needs the plugin loaded.
clean:
	rm -f $(PLUGIN) $(WORKER) $(CLI) $(TRACER) $(CORE_DIRS:=/*.o) plugin/*.o \
		t/unit/*.t $(TEST_HELPERS) $(CORE_LIB) $(FLAGS_STAMP) \
		examples/demo/*.o examples/demo/wordstat \
		examples/incremental/*.o examples/incremental/*.d \
		examples/incremental/objs.stamp examples/incremental/prog
	rm -rf build/asan build/fuzz build/faults build/valgrind build/stress build/gocache build/gopath \
		build/deb

.PHONY: all $(SUITE_GOALS) check-man build-asan build-fuzz \
	test-build install uninstall demo bench clean
