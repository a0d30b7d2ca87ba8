#!/usr/bin/env python3
"""fionread.py PATH [AT_LEAST]: print how many bytes (jobserver tokens)
wait in a fifo.  With AT_LEAST, first wait (at most 10 s) until there are
that many: a token given back by another process lands a moment after
whatever told the caller to look."""
import array, fcntl, os, sys, termios, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
want = int(sys.argv[2]) if len(sys.argv) > 2 else 0
deadline = time.monotonic() + 10
n = array.array("i", [0])
while True:
    fcntl.ioctl(fd, termios.FIONREAD, n, True)
    if n[0] >= want or time.monotonic() > deadline:
        break
    time.sleep(0.01)
print(n[0])
