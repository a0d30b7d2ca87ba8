#!/bin/sh
# The built objects: the plugin exports only what make looks up (anything
# else global could bind to make's own symbols of the same name), and the
# worker executable runs.
. "$(dirname "$0")/lib.sh"

command -v nm >/dev/null 2>&1 || skip_all "nm not installed (binutils)"
[ -f "$ASYNC_PLUGIN" ] || skip_all "$ASYNC_PLUGIN not built (run make)"

# Defined dynamic symbols that are not ours and are allowed to appear:
# section/linker markers some toolchains export from every shared object,
# and, in the sanitizer build only, the instrumentation's own symbols.
tolerated='^(_init|_fini|_edata|_end|__bss_start|__data_start|_IO_stdin_used)$'
if [ "${TEST_VARIANT:-}" = asan ]; then
	tolerated='^(_init|_fini|_edata|_end|__bss_start|__data_start|_IO_stdin_used|__odr_asan[._].*|__asan_.*|__ubsan_.*|__sanitizer_.*)$'
fi

# NAME TYPE lines for every defined dynamic symbol, sorted.
nm -D --defined-only "$ASYNC_PLUGIN" | awk 'NF == 3 { print $3, $2 }' | sort >exports
grep -Ev "$tolerated" exports | awk '{ print $1 }' >ours || true

check_exports() {
	expect_eq "asynccompile_gmk_setup asynccompile_kbuild_gmk_setup plugin_is_GPL_compatible" \
		"$(tr '\n' ' ' <ours | sed 's/ $//')" "exported symbols (tolerated: $tolerated)"
}
ok "plugin exports exactly its two setup functions and plugin_is_GPL_compatible" check_exports

ok "asynccompile_gmk_setup is a function" \
	expect_grep '^asynccompile_gmk_setup [Tt]$' exports
ok "asynccompile_kbuild_gmk_setup (asynccompile-kbuild.mk's entry point) is a function" \
	expect_grep '^asynccompile_kbuild_gmk_setup [Tt]$' exports
ok "plugin_is_GPL_compatible is a data symbol" \
	expect_grep '^plugin_is_GPL_compatible [BbDdGgSsRrVv]$' exports

# make dlopens the object into itself: a -shared link that forgot the
# shared-object bit or PIC would not load.
check_shared() {
	t=$(file -L "$ASYNC_PLUGIN")
	case $t in
	*"shared object"*) return 0 ;;
	esac
	echo "file(1) says: $t"
	return 1
}
if command -v file >/dev/null 2>&1; then
	ok "plugin is an ELF shared object" check_shared
else
	skip "file(1) not installed"
fi

worker=${ASYNC_COMPILE_WORKER:-$TEST_ROOT/worker/asynccompile-worker}
check_worker_version() {
	status=0
	"$worker" --version >wv.out 2>wv.err </dev/null || status=$?
	if [ "$status" -ne 0 ]; then
		echo "$worker --version exited $status"; cat wv.out wv.err
		return 1
	fi
	expect_grep asynccompile wv.out
}
if [ -x "$worker" ]; then
	ok "worker --version exits 0 and names asynccompile" check_worker_version
else
	skip "$worker not built yet"
fi

done_testing
