# build.mk - out-of-tree variant builds (ASan+UBSan, fuzzing) driven by the
# top-level Makefile: make -f build.mk VARIANT=asan SRCDIR=... variant-build
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

$(B)/t/unit/test-snap.t: $(SRCDIR)/trace/snap.c

$(B)/t/helpers/%: $(SRCDIR)/t/helpers/%.c $(VCORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(YAML_LIBS)

# Helpers that tests run as $(async-shell) commands which must be reused
# or speculated: the plain build's.  The ASan runtime makes its own system
# calls, so a run of an instrumented program is opaque (t4068), and the
# Go helper is no C program to instrument.
PLAIN_HELPERS = $(B)/t/helpers/goread $(B)/t/helpers/lockwait
$(PLAIN_HELPERS): $(B)/t/helpers/%: t/helpers/%
	@mkdir -p $(dir $@)
	cp $< $@

# Everything the ASan pass of t/Makefile runs.
variant-build: $(B)/$(PLUGIN) $(B)/$(WORKER) $(B)/$(CLI) $(VUNIT) $(VHELPERS)

FUZZ_FLAGS = -fsanitize=fuzzer,address,undefined -g -O1
FUZZ_SRC = $(wildcard $(SRCDIR)/fuzz/fuzz-*.c)
FUZZERS = $(patsubst $(SRCDIR)/fuzz/%.c,$(B)/%,$(FUZZ_SRC))
$(B)/fuzz-%: $(SRCDIR)/fuzz/fuzz-%.c $(addprefix $(SRCDIR)/,$(CORE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_GNU_SOURCE -I$(SRCDIR) $(YAML_CFLAGS) $(FUZZ_FLAGS) -o $@ $^ $(YAML_LIBS)

# The fuzzers t/Makefile's check-fuzz runs.
fuzzers: $(FUZZERS)

.PHONY: variant-build fuzzers
