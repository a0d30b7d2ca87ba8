#!/bin/sh
# make install / make uninstall into a staging DESTDIR: the right files
# land at the right paths with the right contents, uninstall takes exactly
# them away again, and the directories install made, and neither builds
# anything into the source tree.
#
# Runs the repository's Makefile with the system make, whatever make the
# suite is testing: this is about packaging, not about the plugin in make.
. "$(dirname "$0")/lib.sh"

sysmake=$(command -v make) || skip_all "no make on PATH"
tree_plugin=$TEST_ROOT/asynccompile.so
tree_worker=$TEST_ROOT/worker/asynccompile-worker
[ -f "$tree_plugin" ] || skip_all "$tree_plugin not built (run make)"
[ -x "$tree_worker" ] || skip_all "$tree_worker not built (run make)"

dest=$TRASH/d
prefix=/usr/local
root=$dest$prefix

sys_make() { # target -> ./make.out, status in $sys_status
	sys_status=0
	timeout -k 5 120 "$sysmake" -C "$TEST_ROOT" --no-print-directory \
		DESTDIR="$dest" PREFIX="$prefix" "$@" >make.out 2>&1 </dev/null ||
		sys_status=$?
}
expect_sys_make_ok() {
	[ "$sys_status" -eq 0 ] && return 0
	echo "make $* exited $sys_status:"; sed 's/^/  | /' make.out
	return 1
}

# Files in the staging root that are not ours: install must leave them
# alone and uninstall must not touch them.
# An empty directory install uses (man5) is not its own either.
mkdir -p "$root/lib/pkgconfig" "$root/libexec/other" "$root/include" "$root/share/man/man5"
echo keep >"$root/lib/other.so"
echo keep >"$root/lib/pkgconfig/other.pc"
echo keep >"$root/libexec/other/tool"
echo keep >"$root/include/other.h"
others='usr/local/include/other.h
usr/local/lib/other.so
usr/local/lib/pkgconfig/other.pc
usr/local/libexec/other/tool'
dirs_in_dest() {
	(cd "$dest" && find . -type d) | sed 's|^\./||' | LC_ALL=C sort
}
dirs_before=$(dirs_in_dest)

# Anything the Makefile would rebuild would land in the tree; if the tree
# is stale, install would rebuild, so say so instead of going on.
tree_current() {
	"$sysmake" -q -C "$TEST_ROOT" all >/dev/null 2>&1 </dev/null && return 0
	echo "make -q all: the tree is not up to date; run make first"
	return 1
}
ok "source tree is up to date before install" tree_current
if [ "$test_failed" -ne 0 ]; then
	done_testing
	exit 1
fi
: >stamp

sys_make install
ok "make install DESTDIR=... PREFIX=$prefix succeeds" expect_sys_make_ok install

files_in_dest() {
	(cd "$dest" && find . -type f -o -type l) | sed 's|^\./||' | LC_ALL=C sort
}
expected=$(printf '%s\n' "$others" \
	usr/local/bin/asynccompile \
	usr/local/lib/asynccompile.so \
	usr/local/lib/pkgconfig/asynccompile.pc \
	usr/local/libexec/asynccompile/asynccompile-trace.so \
	usr/local/libexec/asynccompile/asynccompile-worker \
	usr/local/share/asynccompile/asynccompile-kbuild.mk \
	usr/local/share/asynccompile/asynccompile.mk \
	usr/local/share/asynccompile/installed-dirs \
	usr/local/share/man/man1/asynccompile.1 \
	usr/local/share/man/man1/asynccompile-worker.1 \
	usr/local/share/man/man5/asynccompile.yaml.5 \
	usr/local/share/man/man7/asynccompile.7 | LC_ALL=C sort)
ok "install creates exactly the plugin, the worker, the command, the tracer, the probe macros, the Kbuild fragment, the .pc file, the manual pages and its record" \
	expect_eq "$expected" "$(files_in_dest)" "files under DESTDIR"
ok "nothing goes to INCLUDEDIR any more" test ! -e "$root/include/asynccompile.mk"
ok "install's record names the directories it made, and only those" \
	expect_eq "$prefix/bin
$prefix/libexec/asynccompile
$prefix/share/asynccompile
$prefix/share/man/man1
$prefix/share/man/man7" "$(cat "$root/share/asynccompile/installed-dirs")" "installed-dirs"
ok "installed probe macros are the source's" \
	cmp "$TEST_ROOT/asynccompile.mk" "$root/share/asynccompile/asynccompile.mk"

ok "installed plugin is the built one" cmp "$tree_plugin" "$root/lib/asynccompile.so"
ok "installed worker is the built one" \
	cmp "$tree_worker" "$root/libexec/asynccompile/asynccompile-worker"
ok "installed worker is executable" test -x "$root/libexec/asynccompile/asynccompile-worker"
ok "installed tracer is the built one" \
	cmp "$TEST_ROOT/trace/asynccompile-trace.so" "$root/libexec/asynccompile/asynccompile-trace.so"

ok "installed command is the built one" cmp "$TEST_ROOT/cli/asynccompile" "$root/bin/asynccompile"
ok "installed command runs from \$(BINDIR)" \
	sh -c '"$0" --version | grep -q "^asynccompile [0-9]"' "$root/bin/asynccompile"

for page in man1/asynccompile.1 man1/asynccompile-worker.1 man5/asynccompile.yaml.5 man7/asynccompile.7; do
	ok "installed manual page $page is the source's" \
		cmp "$TEST_ROOT/man/${page#*/}" "$root/share/man/$page"
done
# man finds the pages through the installed tree's man directory.
if command -v man >/dev/null 2>&1; then
	ok "man -M finds and renders the installed asynccompile(7)" \
		sh -c 'MAN_DISABLE_SECCOMP=1 MANWIDTH=80 man -M "$0" 7 asynccompile 2>&1 | grep -q "async-wait"' "$root/share/man"
else
	skip "man not installed"
fi

# The object finds an installed worker through the libexec path compiled
# into it; DESTDIR is a staging root and must not be compiled in.
check_libexec_path() {
	grep -qF "$prefix/libexec/asynccompile" "$root/lib/asynccompile.so" && return 0
	echo "asynccompile.so does not mention $prefix/libexec/asynccompile"
	return 1
}
ok "installed plugin looks for its worker under $prefix/libexec" check_libexec_path
check_no_destdir() {
	grep -qF "$dest" "$root/lib/asynccompile.so" "$root/lib/pkgconfig/asynccompile.pc" || return 0
	grep -lF "$dest" "$root/lib/asynccompile.so" "$root/lib/pkgconfig/asynccompile.pc"
	echo "DESTDIR ($dest) leaked into the installed files above"
	return 1
}
ok "DESTDIR does not leak into the installed files" check_no_destdir

pc=$root/lib/pkgconfig/asynccompile.pc
ok "asynccompile.pc has no unsubstituted @VARIABLES@" expect_no_grep '@[A-Z_]*@' "$pc"
pc_var() { # name
	PKG_CONFIG_PATH="$root/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR='' \
		pkg-config --variable="$1" asynccompile
}
if command -v pkg-config >/dev/null 2>&1; then
	ok "pkg-config finds asynccompile in the staged pkgconfig dir" \
		env PKG_CONFIG_PATH="$root/lib/pkgconfig" pkg-config --exists asynccompile
	ok "pkg-config --variable=plugin gives the installed plugin" \
		expect_eq "$prefix/lib/asynccompile.so" "$(pc_var plugin)" plugin
	ok "pkg-config --variable=prefix" expect_eq "$prefix" "$(pc_var prefix)" prefix
	ok "pkg-config --variable=libdir" expect_eq "$prefix/lib" "$(pc_var libdir)" libdir
	ok "pkg-config --variable=kbuild gives the installed Kbuild fragment" \
		expect_eq "$prefix/share/asynccompile/asynccompile-kbuild.mk" "$(pc_var kbuild)" kbuild
	ok "pkg-config --variable=helpers gives the installed probe macros" \
		expect_eq "$prefix/share/asynccompile/asynccompile.mk" "$(pc_var helpers)" helpers
else
	skip "pkg-config not installed"
	skip "pkg-config not installed"
fi

# README's adoption lines, as README has them: they load the installed
# plugin, and without the package they stop make with one line naming
# asynccompile (an empty `load` alone is accepted by make).
mkdir -p adopt
sed -n '/^    ASYNC_COMPILE_PREFIX := /,/^    include /s/^    //p' "$TEST_ROOT/README" >adopt/Makefile
ok "README's adoption lines are four" expect_eq 4 "$(wc -l <adopt/Makefile)" "lines"
printf '$(async-try a,echo adopted)\n$(async-wait)\n$(info a=$(a.out))\nall: ; @:\n' >>adopt/Makefile
# the staged files lie under DESTDIR: a copy of the .pc that says so
mkdir -p adopt/pc
sed "s|$prefix|$root|g" "$root/lib/pkgconfig/asynccompile.pc" >adopt/pc/asynccompile.pc
if command -v pkg-config >/dev/null 2>&1; then
	(unset ASYNC_COMPILE_WORKER ASYNC_COMPILE_CONFIG; cd adopt &&
	 PKG_CONFIG_PATH="$TRASH/adopt/pc" PKG_CONFIG_SYSROOT_DIR='' "$MAKE_UT" >out 2>err); rc=$?
	ok "README's adoption lines load the installed plugin" \
		sh -c '[ "$0" -eq 0 ] && grep -qx "a=adopted" adopt/out || { cat adopt/out adopt/err; exit 1; }' "$rc"
	(cd adopt && PKG_CONFIG_PATH="$TRASH/nowhere" PKG_CONFIG_LIBDIR="$TRASH/nowhere" \
	 "$MAKE_UT" >out 2>err); rc=$?
	ok "without the package they stop make: exit 2" expect_eq 2 "$rc" "make's exit status"
	ok "... with one line naming asynccompile" \
		sh -c '[ "$(wc -l <adopt/err)" -eq 1 ] && grep -q "asynccompile is not installed" adopt/err || { cat adopt/err; exit 1; }'
else
	skip "pkg-config not installed"
	skip "pkg-config not installed"
	skip "pkg-config not installed"
fi

frag=$root/share/asynccompile/asynccompile-kbuild.mk
ok "the installed Kbuild fragment loads the installed plugin" \
	expect_eq "-load $prefix/lib/asynccompile.so(asynccompile_kbuild_gmk_setup)" \
	"$(grep '^-load' "$frag")" "its load line"
ok "the installed Kbuild fragment looks nowhere else" expect_no_grep 'MAKEFILE_LIST' "$frag"

# The staged plugin must find the staged worker by itself (relative to its
# own location: DESTDIR means the configured LIBEXECDIR does not exist),
# and include the installed helper library.
mkdir -p use
printf 'load %s\ninclude %s\n$(async-try a,echo from-installed)\n$(async-wait)\n$(info a=$(a.out))\nall: ; @:\n' \
	"$root/lib/asynccompile.so" "$root/share/asynccompile/asynccompile.mk" >use/Makefile
(unset ASYNC_COMPILE_WORKER ASYNC_COMPILE_CONFIG; cd use && "$MAKE_UT" >out 2>err); rc=$?
ok "the installed plugin finds its installed worker and runs a job" \
	sh -c '[ "$0" -eq 0 ] && grep -qx "a=from-installed" use/out || { cat use/out use/err; exit 1; }' "$rc"

sys_make uninstall
ok "make uninstall with the same variables succeeds" expect_sys_make_ok uninstall
ok "uninstall removes exactly what install added" \
	expect_eq "$others" "$(files_in_dest)" "files under DESTDIR"
ok "uninstall removes the libexec/asynccompile directory" \
	test ! -e "$root/libexec/asynccompile"
ok "uninstall removes the share/asynccompile directory" \
	test ! -e "$root/share/asynccompile"
ok "uninstall removes the directories install made, and no other" \
	expect_eq "$dirs_before" "$(dirs_in_dest)" "directories under DESTDIR"

# DATADIR moves the Kbuild fragment, and the .pc file's kbuild= follows it
# (it used to say ${prefix}/share whatever DATADIR was); PLUGINDIR moves
# the plugin (debian/rules), and plugin= and the fragment follow it.
dest2=$TRASH/d2
datadir=/opt/data-elsewhere
plugindir=$prefix/lib/asynccompile
sys_make2() { # target
	sys_status=0
	timeout -k 5 120 "$sysmake" -C "$TEST_ROOT" --no-print-directory DESTDIR="$dest2" \
		PREFIX="$prefix" DATADIR="$datadir" PLUGINDIR="$plugindir" "$@" \
		>make.out 2>&1 </dev/null || sys_status=$?
}
sys_make2 install
ok "make install DATADIR=$datadir PLUGINDIR=$plugindir succeeds" expect_sys_make_ok install
ok "PLUGINDIR=$plugindir: the plugin is installed there" cmp "$tree_plugin" "$dest2$plugindir/asynccompile.so"
ok "PLUGINDIR=$plugindir: the Kbuild fragment loads it" \
	expect_eq "-load $plugindir/asynccompile.so(asynccompile_kbuild_gmk_setup)" \
	"$(grep '^-load' "$dest2$datadir/asynccompile/asynccompile-kbuild.mk")" "its load line"
ok "DATADIR=$datadir: the fragment is installed under it" \
	test -f "$dest2$datadir/asynccompile/asynccompile-kbuild.mk"
ok "DATADIR=$datadir: asynccompile.pc's datadir is it" \
	expect_eq "datadir=$datadir" "$(grep '^datadir=' "$dest2$prefix/lib/pkgconfig/asynccompile.pc")" datadir
if command -v pkg-config >/dev/null 2>&1; then
	ok "DATADIR=$datadir: pkg-config --variable=kbuild names the installed fragment" \
		expect_eq "$datadir/asynccompile/asynccompile-kbuild.mk" \
		"$(PKG_CONFIG_PATH="$dest2$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR='' \
			pkg-config --variable=kbuild asynccompile)" kbuild
	ok "PLUGINDIR=$plugindir: pkg-config --variable=plugin names it" \
		expect_eq "$plugindir/asynccompile.so" \
		"$(PKG_CONFIG_PATH="$dest2$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR='' \
			pkg-config --variable=plugin asynccompile)" plugin
else
	skip "pkg-config not installed"
	skip "pkg-config not installed"
fi
# Installed twice, the record keeps what the first install made.
sys_make2 install
sys_make2 uninstall
ok "make uninstall after two installs succeeds" expect_sys_make_ok uninstall
ok "... and leaves an empty DESTDIR: every directory there was install's" \
	expect_eq "" "$(cd "$dest2" && find . -mindepth 1)" "left under DESTDIR"

# Nothing the build produces changed in the tree while we installed.
check_tree_untouched() {
	find "$TEST_ROOT" \( -path "$TEST_ROOT/.git" -o -path "$TEST_ROOT/build" \) -prune -o \
		-type f -newer stamp \( -name '*.o' -o -name '*.so' -o -name '*.t' \
		-o -name asynccompile-worker -o -name '*.pc' \) -print >rebuilt
	[ ! -s rebuilt ] && return 0
	echo "install/uninstall wrote into the source tree:"; cat rebuilt
	return 1
}
ok "install and uninstall build nothing into the tree" check_tree_untouched

# YAML_STATIC: libyaml's archive into the plugin when there is one (auto,
# the default), its shared library with no (distributions).  The link
# line's libyaml part, printed without building or touching build/FLAGS
# (VARIANT skips the stamp): t0005 checks the packaged plugin's NEEDED.
yaml_libs() { # make args...
	printf 'print-yaml-libs: ; @echo "$(PLUGIN_YAML_LIBS)"\n' >print.mk
	"$sysmake" -s -C "$TEST_ROOT" -f Makefile -f "$TRASH/print.mk" VARIANT=print-only "$@" \
		print-yaml-libs 2>&1 </dev/null
}
archive=$(cc -print-file-name=libyaml.a 2>/dev/null)
case $archive in
/*) ok "YAML_STATIC=auto links libyaml.a when there is one" \
	sh -c 'case "$0" in *libyaml.a*) ;; *) echo "$0"; exit 1;; esac' "$(yaml_libs)" ;;
*) skip "no libyaml.a here" ;;
esac
ok "YAML_STATIC=no links libyaml dynamically" \
	sh -c 'case "$0" in *libyaml.a*|"") echo "[$0]"; exit 1;; *-lyaml*) ;; *) echo "[$0]"; exit 1;; esac' \
	"$(yaml_libs YAML_STATIC=no)"
bad_status=0
yaml_libs YAML_STATIC=maybe >bad.out || bad_status=$?
ok "YAML_STATIC=maybe stops make" expect_eq 2 "$bad_status" status
ok "... with one line saying what it takes" \
	sh -c '[ "$(wc -l <bad.out)" -eq 1 ] && grep -q "YAML_STATIC=maybe: say auto" bad.out || { cat bad.out; exit 1; }'

# A fresh clone on a machine without libyaml's header stops at once with
# the one line that says what to install, not with a compiler error; a
# built tree does not probe again.
mkdir fresh && cp "$TEST_ROOT/Makefile" fresh/
fresh_status=0
"$sysmake" -C fresh --no-print-directory YAML_HEADER=nope.h >fresh.out 2>&1 </dev/null ||
	fresh_status=$?
ok "fresh tree without the header: make exits 2" expect_eq 2 "$fresh_status" status
ok "fresh tree without the header: one line names the packages" \
	expect_eq 1 "$(grep -c 'no C compiler or no nope.h (libyaml): on Debian, apt-get install build-essential pkg-config libyaml-dev' fresh.out)" lines
ok "fresh tree without the header: nothing was compiled" \
	expect_eq "" "$(find fresh -name '*.o' -o -name '*.so')" objects
built_status=0
"$sysmake" -q -C "$TEST_ROOT" YAML_HEADER=nope.h all >built.out 2>&1 </dev/null || built_status=$?
ok "built tree: no probe, make -q all is up to date" expect_eq 0 "$built_status" status
ok "built tree: no probe, no message" expect_eq 0 "$(grep -c 'no C compiler' built.out)" lines

done_testing
