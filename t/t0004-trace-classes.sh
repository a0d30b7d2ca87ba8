#!/bin/sh
# trace/libc.classes against the machine: every function this machine's C
# library exports is classified, nothing classified is missing from it,
# and the tracer exports a hook for exactly the functions classified
# model, opaque or impure (doc/design.md, "The answer model": a call
# nobody classified must not pass as harmless).  The list is also the
# tracer's one list of real-function slots (trace/trace.h), and the
# model lines are what doc/design.md's "The modelled calls" names.
. "$(dirname "$0")/lib.sh"

command -v nm >/dev/null 2>&1 || skip_all "nm not installed (binutils)"
[ -f "$ASYNC_COMPILE_TRACER" ] || skip_all "$ASYNC_COMPILE_TRACER not built (run make)"
classes=$TEST_ROOT/trace/libc.classes
libc=$(ldd "$ASYNC_COMPILE_TRACER" | awk '$1 == "libc.so.6" { print $3 }')
[ -f "$libc" ] || skip_all "the tracer links no libc.so.6 (not glibc?)"

# NAME CLASS [@VERSION] of the list, comments and the @libc line dropped
sed 's/#.*//' "$classes" | awk 'NF >= 2 && $1 !~ /^@/' | sort >classes
awk '{ print $1 }' classes >classified
awk '$2 == "model" || $2 == "opaque" || $2 == "impure" { print $1 }' classes | sort >hooked
awk '$2 == "opaque" || $2 == "impure" { print $1 }' classes | sort >generic
awk '$2 == "model" { print $1 }' classes | sort >model
# @real NAME: a slot for a function the tracer calls but does not hook
sed 's/#.*//' "$classes" | awk '$1 == "@real" { print $2 }' | sort >real
# the C library's functions (T, W, i; objects are not functions): NAME@VER
# and NAME@@VER lines, and the names that have a default (@@) version
nm -D --defined-only "$libc" | awk '$2 ~ /^[TWi]$/ { print $3 }' | sort -u >libc.versions
sed 's/@.*//' libc.versions | sort -u >libc.names
grep '@@' libc.versions | sed 's/@.*//' | sort -u >libc.default
# the tracer's exports, linker markers aside
nm -D --defined-only "$ASYNC_COMPILE_TRACER" | awk 'NF == 3 { print $3 }' |
	grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u >tracer.names

empty() { # file what
	if [ -s "$1" ]; then
		echo "$2:"; sed 's/^/  /' "$1"
		return 1
	fi
}

check_complete() {
	comm -23 libc.names classified >missing
	empty missing "exported by libc, missing from trace/libc.classes"
}
ok "every function of $libc is classified" check_complete

check_unique() {
	sort classified | uniq -d >dups
	empty dups "classified twice"
}
ok "every function is classified once" check_unique

check_stale() {
	comm -13 libc.names classified >stale
	empty stale "in trace/libc.classes, not exported by libc (stale)"
}
ok "every classified name is a function libc exports" check_stale

check_classes() {
	awk '$2 != "model" && $2 != "opaque" && $2 != "impure" && $2 != "self"' classes >bad
	empty bad "an unknown class"
}
ok "every class is model, opaque, impure or self" check_classes

# A name with no default version is bound by old programs only, at the
# version the list names (the hook resolves it with dlvsym); one with a
# default version must not name one.
check_versions() {
	awk 'FNR == NR { n = $0; sub(/@.*/, "", n); if (index($0, "@@")) def[n] = 1; else old[$0] = 1; next }
	     $3 ~ /^@/ { if (def[$1] || !old[$1 $3]) print $1, $3 ": not a version libc keeps it at alone"; next }
	     !def[$1] { print $1 ": libc has no default version of it, the list names none" }' \
		libc.versions classes >bad
	empty bad "versions"
}
ok "compatibility-only functions name their version, no other does" check_versions

check_generic_exported() {
	comm -23 generic tracer.names >missing
	empty missing "classified opaque or impure, no hook in $ASYNC_COMPILE_TRACER"
}
ok "the tracer hooks every function classified opaque or impure" check_generic_exported

check_unclassified_hooks() {
	comm -23 tracer.names hooked >extra
	empty extra "hooked by $ASYNC_COMPILE_TRACER but not classified model, opaque or impure"
}
ok "the tracer hooks nothing the list does not classify as hooked" check_unclassified_hooks

check_model_bodies() {
	comm -23 model tracer.names >missing
	empty missing "classified model, but $ASYNC_COMPILE_TRACER exports no hook body for it"
}
ok "every function classified model has a hook body in the tracer" check_model_bodies

# The slots: one per model line and @real line, each defined once (the
# symbol table of the tracer as built, not stripped: a slot a file
# declared for itself would be a second tr_real_NAME).
check_slots() {
	awk '$2 ~ /^[dDbB]$/ && $3 ~ /^tr_real_/ { n = $3; sub(/^tr_real_/, "", n); sub(/\.[0-9]+$/, "", n); print n }' \
		symtab | sort >slots
	uniq -d slots >dups
	empty dups "real-function slots defined more than once" || return 1
	sort -u model real | comm -3 - slots >diff
	empty diff "slots (right column) against the model and @real lines (left)"
}
nm "$ASYNC_COMPILE_TRACER" >symtab 2>/dev/null
if grep -q ' tr_real_resolve$' symtab; then
	ok "the tracer's real-function slots are the list's model and @real lines, once each" check_slots
else
	skip "$ASYNC_COMPILE_TRACER has no symbol table (stripped): its slots cannot be counted"
fi

# An @real line is for a function the tracer does not hook (a hooked one
# has its slot from its model line) and that its code calls.
check_real_lines() {
	sort -u real | comm -12 - hooked >bad
	sort -u real | comm -23 - classified >>bad
	awk '$2 == "self" { print $1 }' classes | sort | comm -13 - real >notself
	cat "$TEST_ROOT"/trace/*.c | grep -o 'TR_CALL([A-Za-z_0-9]*)' |
		sed 's/TR_CALL(\(.*\))/\1/' | sort -u | comm -13 - real >unused
	empty bad "@real names a hooked or unclassified function" &&
		empty notself "@real names a function not classified self" &&
		empty unused "@real names a function no TR_CALL in trace/ calls"
}
ok "every @real line names a self function the tracer calls" check_real_lines

# doc/design.md, "The modelled calls": every model function, in
# backquotes, and no other name.
check_model_page() {
	awk '/^### The modelled calls/ { on = 1; next } on && /^##/ { exit } on' \
		"$TEST_ROOT/doc/design.md" >page
	if ! [ -s page ]; then
		echo "doc/design.md has no section \"The modelled calls\""; return 1
	fi
	grep -o '`[^`]*`' page | tr -d '`' | sort -u >named
	comm -23 model named >unnamed
	comm -13 model named >extra
	empty unnamed "classified model, not named in doc/design.md's \"The modelled calls\"" &&
		empty extra "named in doc/design.md's \"The modelled calls\", not classified model"
}
ok "doc/design.md names every model function, and only those" check_model_page

# The tracer's own code must not call a generic hook: it would re-enter
# the tracer under its guard, and every run would be opaque.
check_no_self_calls() {
	if ! command -v objdump >/dev/null 2>&1; then
		echo "objdump not installed"; return 1
	fi
	objdump -R "$ASYNC_COMPILE_TRACER" | awk '/JUMP_SLOT|GLOB_DAT/ { sub(/@.*/, "", $3); print $3 }' |
		sort -u | comm -12 - generic >calls
	empty calls "the tracer itself calls (through its PLT) functions it hooks generically"
}
ok "the tracer's own code calls no function it hooks generically" check_no_self_calls

# The records of the slots and generic hooks name their functions by an
# offset (trace.h, tr_symnames): a pointer is relocated, so its page is
# written and faulted in by the loader in every traced process at start.
# 830 relative relocations before; what is left are a few tables.
check_relocs() {
	n=$(readelf -rW "$ASYNC_COMPILE_TRACER" | grep -c 'R_X86_64_RELATIVE')
	[ "$n" -lt 100 ] && return 0
	echo "$n relative relocations: a record holds a pointer again?"
	return 1
}
if [ "$(uname -m)" != x86_64 ]; then
	skip "relocation types are x86-64's here; this is $(uname -m)"
elif ! command -v readelf >/dev/null 2>&1; then
	skip "readelf not installed (binutils): the relocations cannot be counted"
elif readelf -SW "$ASYNC_COMPILE_TRACER" | grep -q '\.relr\.dyn'; then
	skip "the tracer's relative relocations are packed (.relr.dyn): no count to read"
else
	ok "the loader relocates almost nothing in the tracer's records" check_relocs
fi

done_testing
