#!/usr/bin/env python3
"""jscount.py: print how many tokens the jobserver of $MAKEFLAGS holds now.

Run from a recipe line of make's (with '+' under make 4.3, whose
jobserver descriptors reach only recursive lines) while no other job
runs: a make -jN then has N-1 tokens in its jobserver, none more (one
invented) and none fewer (one lost).  The tokens read are written back,
the very bytes.  Reads through a private open file description
(/proc/self/fd/R, or the fifo's path), so make's own O_NONBLOCK choice is
left alone.
"""
import os, sys

auth = None
for w in os.environ.get("MAKEFLAGS", "").split():
    for k in ("--jobserver-auth=", "--jobserver-fds="):
        if w.startswith(k):
            auth = w[len(k):]
if not auth:
    sys.exit("jscount.py: no jobserver in MAKEFLAGS")
if auth.startswith("fifo:"):
    r = os.open(auth[5:], os.O_RDONLY | os.O_NONBLOCK)
    w = os.open(auth[5:], os.O_WRONLY)
else:
    rfd, wfd = (int(x) for x in auth.split(","))
    r = os.open("/proc/self/fd/%d" % rfd, os.O_RDONLY | os.O_NONBLOCK)
    w = wfd
got = b""
while True:
    try:
        b = os.read(r, 64)
    except BlockingIOError:
        break
    if not b:
        break
    got += b
if got:
    os.write(w, got)
print(len(got))
