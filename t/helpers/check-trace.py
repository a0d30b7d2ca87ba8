#!/usr/bin/env python3
"""check-trace.py FILE NAME...: validate a Chrome trace-event file written
by asynccompile and check it has one worker span per NAME, with a queue
span, sane times, queue/token wait args, and worker tracks named."""
import json, sys

path, names = sys.argv[1], sys.argv[2:]
with open(path) as f:
    doc = json.load(f)
ev = doc["traceEvents"]
errors = []
tracks = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
if tracks.get(0) != "queue":
    errors.append("no queue track: %r" % tracks)
runs = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("try", "compile")]
queues = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "queue"]
for n in names:
    r = [e for e in runs if e["name"] == n]
    q = [e for e in queues if e["name"] == n]
    if len(r) != 1 or len(q) != 1:
        errors.append("%s: %d run spans, %d queue spans" % (n, len(r), len(q)))
        continue
    r, q = r[0], q[0]
    if r["dur"] < 0 or q["dur"] < 0 or r["ts"] < 0:
        errors.append("%s: negative time %r %r" % (n, r, q))
    if r["tid"] not in tracks or not tracks[r["tid"]].startswith("worker "):
        errors.append("%s: on an unnamed track %r" % (n, r["tid"]))
    for k in ("queue_wait_ms", "token_wait_ms", "status", "command"):
        if k not in r["args"]:
            errors.append("%s: no %s" % (n, k))
if len(runs) != len(names):
    errors.append("%d run spans for %d names" % (len(runs), len(names)))
print("\n".join(errors) if errors else "trace ok: %d spans on %d worker tracks" % (len(runs), len(tracks) - 1))
sys.exit(1 if errors else 0)
