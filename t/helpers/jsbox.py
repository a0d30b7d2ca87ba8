#!/usr/bin/env python3
"""jsbox.py STYLE TOKENS -- MAKE ARGS...

Run MAKE as if it were a sub-make of a jobserver we own: STYLE is "pipe"
(--jobserver-auth=R,W) or "fifo" (fifo:PATH).  TOKENS are the token bytes
put in it (e.g. "abc").  After MAKE exits, print the bytes left in the
jobserver (sorted) on the last line of stdout as "tokens:<bytes>" and exit
with MAKE's status.  A test compares them with TOKENS: a lost, invented or
changed byte shows.
"""
import os, subprocess, sys, tempfile

style, tokens = sys.argv[1], sys.argv[2].encode()
cmd = sys.argv[4:] if sys.argv[3] == "--" else sys.argv[3:]
env = dict(os.environ)
if style == "pipe":
    r, w = os.pipe()
    os.write(w, tokens)
    auth = "%d,%d" % (r, w)
    fds = (r, w)
else:
    d = tempfile.mkdtemp()
    path = os.path.join(d, "fifo")
    os.mkfifo(path, 0o600)
    r = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    w = os.open(path, os.O_WRONLY)
    os.write(w, tokens)
    auth = "fifo:" + path
    fds = ()
env["MAKEFLAGS"] = " -j%d --jobserver-auth=%s" % (len(tokens) + 1, auth)
env.pop("MAKELEVEL", None)
rc = subprocess.call(cmd, env=env, pass_fds=fds)
os.set_blocking(r, False)
left = b""
try:
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        left += b
except BlockingIOError:
    pass
sys.stdout.flush()
print("tokens:" + "".join(sorted(left.decode("latin-1"))))
sys.exit(rc)
