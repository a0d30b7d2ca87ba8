#!/bin/sh
# Debian's real dkms builds a module through asynccompile-kbuild.mk, the
# way asynccompile(7) says: MAKE[0] in the module's dkms.conf naming the
# fragment on make's command line (dkms reads dkms.conf and
# /etc/dkms/framework.conf through safe_source, which keeps only the
# variables it knows, so `export MAKEFILES=...` there does nothing), and
# MAKEFILES in dkms's own environment.  Each build must make the .ko and
# go through the plugin (its store gets the speculation record, the
# cache the probes' answers, make.log the debug lines).  The module
# lives in a dkms tree and a source tree of the test's own: nothing is
# added to /var/lib/dkms or /usr/src, nothing is installed or signed.
. "$(dirname "$0")/lib.sh"

command -v dkms >/dev/null || skip_all "no dkms (apt-get install dkms)"
HEADERS=
for d in /usr/src/linux-headers-*-amd64; do
	[ -f "$d/Makefile" ] && HEADERS=$d
done
[ -n "$HEADERS" ] || skip_all "no /usr/src/linux-headers-*-amd64 (apt-get install linux-headers-amd64)"
KVER=${HEADERS#/usr/src/linux-headers-}

NAME=asyncc-t5077-$$
VER=1.0
SRC=$TRASH/src/$NAME-$VER
kbuild_fixture "$SRC" "$NAME"
mkdir "$TRASH/dkms"
conf() { # [MAKE[0] value]
	cat >"$SRC/dkms.conf" <<EOF2
PACKAGE_NAME="$NAME"
PACKAGE_VERSION="$VER"
BUILT_MODULE_NAME[0]="$NAME"
DEST_MODULE_LOCATION[0]="/updates"
AUTOINSTALL="no"
CLEAN="true"
EOF2
	[ -z "${1:-}" ] || printf 'MAKE[0]="%s"\n' "$1" >>"$SRC/dkms.conf"
}

# dkms runs the `make` on PATH: make it the make under test.
mkdir "$TRASH/bin"
printf '#!/bin/sh\necho ran >>"%s"\nexec "%s" "$@"\n' "$TRASH/make-ran" "$MAKE_UT" >"$TRASH/bin/make"
chmod 755 "$TRASH/bin/make"
PATH=$TRASH/bin:$PATH
export PATH

# CLEAN="true" spares the two `make clean` runs of Kbuild that dkms
# makes around each build (the test's own tree is thrown away whole).
# dkms with the test's trees; sign_file names no program, so dkms signs
# nothing and makes no key (it would write /var/lib/dkms/mok.key).
dk() { # action [args]
	sign_file=/nonexistent timeout -k 5 120 dkms "$@" -m "$NAME" -v "$VER" \
		--dkmstree "$TRASH/dkms" --sourcetree "$TRASH/src" >>dkms.out 2>&1
}

KO=$TRASH/dkms/$NAME/$VER/$KVER/$(uname -m)/module/$NAME.ko
LOG=$TRASH/dkms/$NAME/$VER/$KVER/$(uname -m)/log/make.log
STORE=$XDG_CACHE_HOME/asynccompile
records() { ls "$STORE" 2>/dev/null | grep -c '^rec-'; }
entries() { ls "$STORE/cache" 2>/dev/null | wc -l; }
build() { # build the added module for the headers' kernel
	dk build -k "$KVER" --kernelsourcedir "$HEADERS" --force
}

# MAKE[0]: dkms puts -jN and KERNELRELEASE after its leading "make"; the
# fragment comes in as a command-line variable, which every sub-make of
# Kbuild inherits through MAKEFLAGS.  The line is asynccompile(7)'s, the
# installed fragment's path replaced by the test's.
line=$(sed -n 's/^MAKE\[0\]="\(.*\)"$/\1/p' "$TEST_ROOT/man/asynccompile.7" | sed 's/\\-/-/g')
ok "asynccompile(7) gives a MAKE[0] line for dkms.conf" \
	sh -c 'case $0 in "make MAKEFILES=/"*"/asynccompile-kbuild.mk "*) ;; *) echo "got: $0"; exit 1;; esac' "$line"
conf "make MAKEFILES=$FRAG/asynccompile-kbuild.mk ${line#make MAKEFILES=*/asynccompile-kbuild.mk }"
dk add
ok "MAKE[0]: dkms add" expect_eq 0 "$?" "dkms add status"
ASYNC_COMPILE_DEBUG=1 build
rc=$?
ok "MAKE[0]: dkms build succeeds" sh -c '[ "$0" -eq 0 ] || { tail -n 30 dkms.out; exit 1; }' "$rc"
ok "MAKE[0]: the module is built" test -s "$KO"
ok "MAKE[0]: make ran with the fragment" expect_grep "MAKEFILES=$FRAG/asynccompile-kbuild.mk" dkms.out
ok "MAKE[0]: dkms ran the make under test" test -s "$TRASH/make-ran"

ok "MAKE[0]: the plugin kept a speculation record" test "$(records)" -ge 1
ok "MAKE[0]: the probes' answers are cached" test "$(entries)" -ge 20
ok "MAKE[0]: make.log has the plugin's debug lines" expect_grep '^asynccompile: ' "$LOG"
dk remove --all
ok "dkms remove: the module is gone from the dkms tree" test ! -e "$TRASH/dkms/$NAME"

# MAKEFILES in dkms's environment (dkms runs its make command with it),
# with dkms's default make command.
rm -rf "$STORE"
conf
dk add
ok "environment: dkms add" expect_eq 0 "$?" "dkms add status"
MAKEFILES=$FRAG/asynccompile-kbuild.mk build
rc=$?
ok "environment: dkms build succeeds" sh -c '[ "$0" -eq 0 ] || { tail -n 30 dkms.out; exit 1; }' "$rc"
ok "environment: the module is built" test -s "$KO"
ok "environment: the plugin kept a speculation record" test "$(records)" -ge 1
dk remove --all
ok "dkms remove: nothing is left in the dkms tree" expect_eq "" "$(ls "$TRASH/dkms")"

done_testing
