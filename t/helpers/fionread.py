#!/usr/bin/env python3
"""fionread.py PATH: print how many bytes (jobserver tokens) wait in a fifo."""
import array, fcntl, os, sys, termios
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
n = array.array("i", [0])
fcntl.ioctl(fd, termios.FIONREAD, n, True)
print(n[0])
