# build.mk - out-of-tree variant builds (ASan+UBSan, fuzzing) driven by the
# top-level Makefile: make -f build.mk VARIANT=asan SRCDIR=... check-variant
include $(SRCDIR)/Makefile

B = $(SRCDIR)/build/$(VARIANT)
VCORE_OBJ = $(addprefix $(B)/,$(CORE_SRC:.c=.o))
VCORE_LIB = $(B)/libcore.a
VUNIT_PLUGIN_OBJ = $(addprefix $(B)/,$(UNIT_PLUGIN_OBJ))
VPLUGIN_OBJ = $(addprefix $(B)/,$(PLUGIN_SRC:.c=.o))
VUNIT = $(addprefix $(B)/,$(UNIT))
VHELPERS = $(addprefix $(B)/,$(TEST_HELPERS))

$(B)/%.o: $(SRCDIR)/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(SRCDIR) -c -o $@ $<

$(VCORE_LIB): $(VCORE_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/$(PLUGIN): $(VPLUGIN_OBJ) $(VCORE_LIB)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $^ $(ALL_LDFLAGS) $(YAML_LIBS)

$(B)/$(WORKER): $(B)/worker/main.o $(VCORE_LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(YAML_LIBS)

$(B)/$(CLI): $(B)/cli/main.o $(VCORE_LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(YAML_LIBS)

$(B)/t/unit/%.t: $(SRCDIR)/t/unit/%.c $(VUNIT_PLUGIN_OBJ) $(VCORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(SRCDIR)/t/unit -o $@ $^ $(ALL_LDFLAGS) $(YAML_LIBS)

$(B)/t/helpers/%: $(SRCDIR)/t/helpers/%.c $(VCORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(YAML_LIBS)

# Helpers that tests run as $(async-shell) commands which must be reused
# or speculated: the plain build's.  The ASan runtime makes its own system
# calls, so a run of an instrumented program is opaque (t0268), and the
# Go helper is no C program to instrument.
PLAIN_HELPERS = $(B)/t/helpers/goread $(B)/t/helpers/lockwait
$(PLAIN_HELPERS): $(B)/t/helpers/%: t/helpers/%
	@mkdir -p $(dir $@)
	cp $< $@

# ASan's runtime must come first in an uninstrumented make, hence the
# preload; make itself leaks by design, so leak checking is off for it.
ASAN_PRELOAD = $(shell $(CC) -print-file-name=libasan.so):$(shell $(CC) -print-file-name=libubsan.so)
check-variant: $(B)/$(PLUGIN) $(B)/$(WORKER) $(B)/$(CLI) $(VUNIT) $(VHELPERS)
	mkdir -p $(B)/t/helpers && cp $(SRCDIR)/t/helpers/*.py $(B)/t/helpers/
	cd $(SRCDIR) && ASAN_OPTIONS=detect_leaks=1 $(PROVE) $(PROVEFLAGS) $(VUNIT)
	cd $(SRCDIR) && for m in $(TEST_MAKES); do \
		echo "# ASan+UBSan, make under test: $$m"; \
		TEST_MAKE=$$m TEST_VARIANT=asan ASYNC_PLUGIN=$(B)/$(PLUGIN) \
		ASYNC_COMPILE_WORKER=$(B)/$(WORKER) TEST_HELPERDIR=$(B)/t/helpers \
		TEST_PRELOAD="$(ASAN_PRELOAD)" \
		$(PROVE) $(PROVEFLAGS) $(addprefix ./,$(SHELL_TESTS)) || exit 1; \
	done

FUZZ_FLAGS = -fsanitize=fuzzer,address,undefined -g -O1
FUZZ_SRC = $(wildcard $(SRCDIR)/fuzz/fuzz-*.c)
FUZZERS = $(patsubst $(SRCDIR)/fuzz/%.c,$(B)/%,$(FUZZ_SRC))
$(B)/fuzz-%: $(SRCDIR)/fuzz/fuzz-%.c $(addprefix $(SRCDIR)/,$(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_GNU_SOURCE -I$(SRCDIR) $(YAML_CFLAGS) $(FUZZ_FLAGS) -o $@ $^ $(YAML_LIBS)

# Each fuzzer runs for FUZZ_SECONDS over a scratch copy of its corpus, so
# the committed corpus only changes when someone minimises it on purpose.
run-fuzz: $(FUZZERS)
	@set -e; for f in $(FUZZERS); do n=$${f##*/fuzz-}; \
		rm -rf $(B)/corpus-$$n; mkdir -p $(B)/corpus-$$n; \
		cp $(SRCDIR)/fuzz/corpus/$$n/* $(B)/corpus-$$n/ 2>/dev/null || true; \
		echo "# fuzzing $$n for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(B)/crash-$$n- $(B)/corpus-$$n 2>$(B)/fuzz-$$n.log \
			|| { tail -n 40 $(B)/fuzz-$$n.log; exit 1; }; \
		grep -E 'stat::number_of_executed_units' $(B)/fuzz-$$n.log || true; \
	done

.PHONY: check-variant run-fuzz
