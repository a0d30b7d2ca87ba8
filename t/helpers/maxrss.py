#!/usr/bin/env python3
"""maxrss.py CMD...: run CMD, then print 'maxrss_kb=N' (peak RSS of the
largest child process waited for, i.e. make) to fd 3 if open, else stderr,
and exit with CMD's status."""
import os, resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
try:
    os.write(3, b"maxrss_kb=%d\n" % kb)
except OSError:
    sys.stderr.write("maxrss_kb=%d\n" % kb)
sys.exit(rc)
