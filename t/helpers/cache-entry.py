#!/usr/bin/env python3
"""cache-entry.py FILE AGE_SECONDS

Rewrite an answer-cache entry (answer/cache.h) as if it had been created
AGE_SECONDS ago, with a valid checksum: how a test ages an entry without
waiting.  Exits 1 if FILE is not an entry.
"""
import struct, sys, time

path, age = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, "rb").read())
if data[:8] != b"ACCACHE1":
    sys.exit(1)
off = 8 + 4
klen = struct.unpack_from("=Q", data, off)[0]
off += 8 + klen
struct.pack_into("=q", data, off, int(time.time()) - age)
h = 14695981039346656037
for b in data[:-8]:
    h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
struct.pack_into("=Q", data, len(data) - 8, h)
open(path, "wb").write(bytes(data))
