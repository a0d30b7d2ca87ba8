#!/usr/bin/env python3
"""record-pure.py FILE

Rewrite an async-shell record (answer/record.h) so that every entry's last
run reads as pure with nothing read (lib/readset.h), keeping each read
set's environment digest, with a valid checksum: the record an older
tracer, one that did not see what a command did, would have written.  A
test speculates with it what the current tracer would never let run
ahead of need.  Exits 1 if FILE is not a record.
"""
import struct, sys

RS_MAGIC, RS_PURE = 0xA6, 0  # lib/readset.h


def take_bytes(data, off):
    n = struct.unpack_from("=Q", data, off)[0]
    return data[off + 8:off + 8 + n], off + 8 + n


path = sys.argv[1]
data = open(path, "rb").read()
if data[:8] != b"ACRECORD":
    sys.exit(1)
version = struct.unpack_from("=I", data, 8)[0]
off = 8 + 4
_, off = take_bytes(data, off)  # the run key
if version >= 3:
    _, off = take_bytes(data, off)  # the environment make was started with
count = struct.unpack_from("=I", data, off)[0]
off += 4
out = bytearray(data[:off])
for _ in range(count):
    cmdid, off = take_bytes(data, off)
    rs, off = take_bytes(data, off)
    env, off = take_bytes(data, off)
    if len(rs) < 10 or rs[0] != RS_MAGIC:
        sys.exit(1)
    # magic, verdict, the environment's digest, reason "", no entries
    pure = bytes([RS_MAGIC, RS_PURE]) + rs[2:10] + struct.pack("=Q", 0) + struct.pack("=I", 0)
    for field in (cmdid, pure, env):
        out += struct.pack("=Q", len(field)) + field
if off != len(data) - 8:
    sys.exit(1)
h = 14695981039346656037
for b in out:
    h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
out += struct.pack("=Q", h)
open(path, "wb").write(bytes(out))
