#!/bin/sh
# test: per-start-method
# The channel between a recipe wait's collector and its make is private:
# a collector run by hand or from another make, a forged cookie, a
# malformed message, a socket directory another user owns or others may
# enter, each gets a clear error and nothing else, never a hang.
. "$(dirname "$0")/lib.sh"

WORKER=${ASYNC_COMPILE_WORKER:-$TEST_ROOT/worker/asynccompile-worker}
case $WORKER in /*) ;; *) WORKER=$TEST_CWD/$WORKER ;; esac

# line.txt: the collector line a waiting make expanded (its text, run
# by nobody: the recipe echoes it instead of running it), written while
# make still runs, held by a fifo until the test lets it go.
mkfifo hold
write_mk Makefile <<'EOF2'
load @PLUGIN@
define nl


endef
all:
	@$(async-compile s,echo step-out)
	@echo '$(subst $(nl), ,$(async-wait s))' >line.txt; timeout 20 cat hold >/dev/null
EOF2
run_collector() { # how: run the recorded line's command as the test (not make's child)
	set -- $(sed 's/^ *@//; s/ ||.*//' line.txt)
	"$@" >hand.out 2>hand.err
}
rm -f line.txt
timeout -k 5 60 "$MAKE_UT" -s >out 2>err &
mk=$!
wait_until test -s line.txt
run_collector; rc=$?
timeout 20 sh -c 'echo done >hold'
wait $mk; make_status=$?
ok "by hand: the collector fails (status 2)" expect_eq 2 "$rc" "collector status"
ok "by hand: it says it is not make's" expect_grep 'not a process of this make' hand.err
ok "by hand: no step output" expect_eq "" "$(cat hand.out)" "collector stdout"
ok "by hand: make itself is untouched" expect_make_ok

ok "after make: the socket is gone" sh -c '! ls "$TMPDIR"/asynccompile-*/m* 2>/dev/null'
run_collector; rc=$?
ok "after make: the collector fails" expect_eq 2 "$rc" "collector status"
ok "after make: it says no make is waiting" expect_grep 'no make is waiting at' hand.err

# Not a wait at all.
"$WORKER" --collect "$TMPDIR/nothing" 12 >hand.out 2>hand.err; rc=$?
ok "a malformed argument: status 2" expect_eq 2 "$rc" "collector status"
ok "a malformed argument: said so" expect_grep "not a wait (WAIT:COOKIE)" hand.err

# From inside make (a descendant), a forged cookie, another wait's
# number, and bytes that are no message: each is refused by the plugin.
cat >client.py <<'EOF2'
import os, socket, struct, sys
path, what, proto = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(20)
def frame(i, p): return struct.pack("=qq", i, len(p)) + p
def collect(wait, cookie):
    c = cookie.encode()
    return bytes([9]) + struct.pack("=Iq", proto, wait) + struct.pack("=Q", len(c)) + c
if what == "garbage": s.sendall(b"\x01" * 40)
elif what == "huge": s.sendall(struct.pack("=qq", 0, 1 << 20))
elif what == "type": s.sendall(frame(0, bytes([1]) + b"\0" * 12))
elif what == "cookie": s.sendall(frame(0, collect(1, "0" * 32)))
elif what == "wait": s.sendall(frame(0, collect(99, "0" * 32)))
data = b""
while True:
    b = s.recv(4096)
    if not b: break
    data += b
i, n = struct.unpack("=qq", data[:16])
print("id=%d type=%d %s" % (i, data[16], data[17:16 + n].decode()))
EOF2
# the collector's protocol version: this tree's (lib/proto.h)
proto=$(sed -n 's/^#define PROTO_VERSION \([0-9]*\).*/\1/p' "$TEST_ROOT/lib/proto.h")
for what in garbage huge type cookie wait; do
	write_mk Makefile <<EOF2
load @PLUGIN@
all:
	@\$(async-compile s,echo step-out)
	@python3 $TRASH/client.py "\$(word 3,\$(async-wait s))" $what $proto >reply.$what
EOF2
	run_make -s
	ok "$what from make's child: a clear ERROR back, make goes on" \
		sh -c 'grep -q "^id=0 type=7 ." reply.$0 || { cat reply.$0 out err; exit 1; }' "$what"
done
ok "a garbage frame header: the reason" expect_grep 'frame header: payload length' reply.garbage
ok "a 1 MiB frame: refused before it is read" expect_grep 'must be a COLLECT' reply.huge
ok "another message type: the reason" expect_grep 'COLLECT: wrong message type' reply.type
ok "a forged cookie: refused" expect_grep 'wait 1 is not one this make' reply.cookie
ok "an unknown wait: refused" expect_grep 'wait 99 is not one this make' reply.wait

# The socket's directory: another user's, or one others may enter, is
# refused; the wait then blocks make as before, after one warning.
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: ; @$(async-compile s,echo step-out)$(async-wait)
EOF2
d=$TMPDIR/asynccompile-$(id -u)
rm -rf "$d"; mkdir -m 755 "$d"
run_make
ok "a directory others may enter: make still builds" expect_make_ok
ok "a directory others may enter: the step's output" expect_grep '^step-out$' out
ok "a directory others may enter: refused, with a warning" \
	expect_grep 'recipe waits block make: .*others may enter it' err
rm -rf "$d"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -m 700 "$d"; chown nobody "$d"
	run_make
	ok "another user's directory: make still builds" expect_make_ok
	ok "another user's directory: refused, with a warning" \
		expect_grep 'recipe waits block make: .*owned by another user' err
	rm -rf "$d"
else
	skip "another user's directory: needs root and the user nobody"
	skip "another user's directory"
fi
run_make
ok "a fresh directory: made 0700" sh -c '[ "$(stat -c %a "$0")" = 700 ]' "$d"

done_testing
