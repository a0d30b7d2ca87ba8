#!/bin/sh
# The Debian package, installed: ASYNC_TEST_DEB names the .deb
# (.ci/deb-build.sh builds it; .ci/run sets this).  It installs with
# apt-get, gives a plugin that pkg-config names and a makefile loads, the
# probe macros, the Kbuild fragment and the manual pages, and a purge
# leaves nothing behind.  Installs into the real system, so only as root,
# and never over an asynccompile package already installed.
. "$(dirname "$0")/lib.sh"

deb=${ASYNC_TEST_DEB:-}
[ -n "$deb" ] || skip_all "ASYNC_TEST_DEB names no .deb (.ci/run builds one with .ci/deb-build.sh)"
case $deb in /*) ;; *) deb=$TEST_CWD/$deb ;; esac
[ -f "$deb" ] || skip_all "ASYNC_TEST_DEB=$deb: no such file"
[ "$(id -u)" -eq 0 ] || skip_all "installs a package: root only"

# The installed copy stands alone: nothing of the tree's.
unset ASYNC_PLUGIN ASYNC_COMPILE_WORKER ASYNC_COMPILE_TRACER ASYNC_COMPILE_CONFIG \
	PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
HOME=$TRASH/home XDG_CONFIG_HOME=$TRASH/home/.config
export HOME XDG_CONFIG_HOME
mkdir -p "$HOME"

installed() {
	[ "$(dpkg-query -W -f '${db:Status-Status}' asynccompile 2>/dev/null)" = installed ]
}
ok "the .deb is the asynccompile package" \
	expect_eq asynccompile "$(dpkg-deb -f "$deb" Package)" Package
if installed; then
	ok "asynccompile is not installed before the test" false
	done_testing
	exit 1
fi
# A failing test must not leave the package installed.
trap 'installed && apt-get -q -y purge asynccompile >/dev/null 2>&1; test_cleanup' EXIT

# Whatever is named *asynccompile* in the system's trees now is not ours
# (not /tmp nor /var/tmp: other users' scratch files come and go there).
sys_trees='/usr /etc /opt /var/lib /var/cache /var/log'
sys_paths() {
	find $sys_trees -name '*asynccompile*' 2>/dev/null | LC_ALL=C sort
}
sys_paths >before

apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get -q -y install --no-install-recommends "$deb" >apt.out 2>&1 ||
		{ cat apt.out; return 1; }
}
ok "apt-get install ./asynccompile_*.deb succeeds" apt_install
ok "the package is installed" installed
dpkg -L asynccompile | LC_ALL=C sort >listed

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
plugin=$(pkg-config --variable=plugin asynccompile)
ok "pkg-config --variable=plugin names the plugin in the multiarch LIBDIR" \
	expect_eq "/usr/lib/$multiarch/asynccompile/asynccompile.so" "$plugin" plugin
ok "... and the package ships it" expect_grep "^$plugin\$" listed
needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
ok "the plugin links libyaml dynamically" \
	sh -c 'case " $0" in *" libyaml-0.so."*) ;; *) echo "NEEDED: $0"; exit 1;; esac' "$needed"
helpers=$(pkg-config --variable=helpers asynccompile)
kbuild=$(pkg-config --variable=kbuild asynccompile)
ok "the probe macros are under /usr/share/asynccompile" \
	expect_eq /usr/share/asynccompile/asynccompile.mk "$helpers" helpers
ok "the Kbuild fragment is under /usr/share/asynccompile" \
	expect_eq /usr/share/asynccompile/asynccompile-kbuild.mk "$kbuild" kbuild
ok "... and loads the packaged plugin" \
	expect_eq "-load $plugin(asynccompile_kbuild_gmk_setup)" "$(grep '^-load' "$kbuild")" "load line"
ok "nothing in /usr/include" expect_no_grep '^/usr/include' listed
ok "nothing under /usr/local" expect_no_grep '^/usr/local' listed

# README's adoption lines, a recipe's build steps and wait, a probe macro
# and an async-shell, in one small makefile.
mkdir proj
printf 'int part(void);\nint main(void) { return part() == 42 ? 0 : 1; }\n' >proj/main.c
printf 'int part(void) { return 42; }\n' >proj/part.c
sed -n '/^    ASYNC_COMPILE_PREFIX := /,/^    include /s/^    //p' "$TEST_ROOT/README" >proj/Makefile
ok "README's four adoption lines are found" expect_eq 4 "$(wc -l <proj/Makefile)" "lines"
cat >>proj/Makefile <<'MK'
$(call async-cc-option,-fstack-protector-strong)
$(async-probes-wait)
SP := $(call cc-option-result,-fstack-protector-strong,none)
SAID := $(async-shell echo said by async-shell)
$(info loaded: $(.LOADED))
$(info probe: $(SP))
$(info shell: $(SAID))
prog: main.c part.c
	$(async-compile main.o,$(CC) -c -o main.o main.c)
	$(async-compile part.o,$(CC) -c -o part.o part.c)
	$(async-wait)
	$(CC) -o $@ main.o part.o
	./$@ && echo prog runs
MK
(cd proj && timeout -k 5 120 "$MAKE_UT" -j2 >../out 2>../err); make_status=$?
ok "a makefile loads the packaged plugin through pkg-config and builds" expect_make_ok
ok "... the plugin make loaded is the packaged one" expect_grep "^loaded: $plugin\$" out
ok "... a probe macro answers" expect_grep '^probe: -fstack-protector-strong$' out
ok "... \$(async-shell) answers" expect_grep '^shell: said by async-shell$' out
ok "... \$(async-compile) and \$(async-wait) built both objects" expect_grep '^prog runs$' out

# Every manual page of the tree, and for each section-1 page but the
# worker's (which lives in libexec) a command on PATH: asynccompile(1)
# once the tree has it.
for src in "$TEST_ROOT"/man/*.[1-8]; do
	page=${src##*/} sec=${src##*.}
	name=${page%.*}
	ok "man finds $name($sec)" \
		sh -c 'MAN_DISABLE_SECCOMP=1 man -w "$0" "$1" | grep -q "^/usr/share/man/"' "$sec" "$name"
	[ "$sec" = 1 ] && [ "$name" != asynccompile-worker ] || continue
	ok "the package puts $name on PATH" expect_grep "^/usr/bin/$name\$" listed
	ok "$name --help runs from PATH" sh -c '"$0" --help >/dev/null' "$name"
done
cmds=$(grep '^/usr/bin/.' listed || true)
ok "every command in /usr/bin has a manual page" \
	sh -c 'for c in $0; do MAN_DISABLE_SECCOMP=1 man -w 1 "${c##*/}" >/dev/null || exit 1; done' "$cmds"

purge() {
	DEBIAN_FRONTEND=noninteractive apt-get -q -y purge asynccompile >apt.out 2>&1 || { cat apt.out; return 1; }
}
ok "apt-get purge asynccompile succeeds" purge
ok "the package is gone from dpkg's database" \
	expect_eq not-installed "$(dpkg-query -W -f '${db:Status-Status}' asynccompile 2>/dev/null || echo not-installed)" status
left_over() { # what dpkg -L listed that is still there, but the shared directories
	while read -r p; do
		[ -e "$p" ] || continue
		[ -d "$p" ] && case $p in *asynccompile*) ;; *) continue;; esac
		echo "$p"
	done <listed
}
ok "every file and asynccompile directory the package had is removed" expect_eq "" "$(left_over)" "left over"
ok "nothing named *asynccompile* left in $sys_trees" \
	expect_eq "$(cat before)" "$(sys_paths)" "paths named *asynccompile*"

done_testing
