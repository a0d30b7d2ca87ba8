#!/usr/bin/env python3
"""check-trace.py [--makes N] FILE NAME...: validate a Chrome trace-event
file written by asynccompile and check it has one worker span per NAME,
with a queue span, sane times, queue/token wait args, and worker tracks
named; with --makes, that the spans come from N makes (process tracks)."""
import json, sys

args = sys.argv[1:]
makes = None
if args[:1] == ["--makes"]:
    makes, args = int(args[1]), args[2:]
path, names = args[0], args[1:]
with open(path) as f:
    doc = json.load(f)
ev = doc["traceEvents"]
errors = []
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
          if e.get("ph") == "M" and e["name"] == "thread_name"}
procs = {e["pid"]: e["args"]["name"] for e in ev
         if e.get("ph") == "M" and e["name"] == "process_name"}
runs = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("try", "compile")]
queues = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "queue"]
for pid in {e["pid"] for e in runs}:
    if tracks.get((pid, 0)) != "queue":
        errors.append("make %d: no queue track" % pid)
    if not procs.get(pid, "").startswith("make["):
        errors.append("make %d: no process name: %r" % (pid, procs.get(pid)))
for n in names:
    r = [e for e in runs if e["name"] == n]
    q = [e for e in queues if e["name"] == n]
    if len(r) != 1 or len(q) != 1:
        errors.append("%s: %d run spans, %d queue spans" % (n, len(r), len(q)))
        continue
    r, q = r[0], q[0]
    if r["dur"] < 0 or q["dur"] < 0 or r["ts"] < 0:
        errors.append("%s: negative time %r %r" % (n, r, q))
    if not tracks.get((r["pid"], r["tid"]), "").startswith("worker "):
        errors.append("%s: on an unnamed track %r" % (n, r["tid"]))
    for k in ("queue_wait_ms", "token_wait_ms", "status", "command"):
        if k not in r["args"]:
            errors.append("%s: no %s" % (n, k))
if len(runs) != len(names):
    errors.append("%d run spans for %d names" % (len(runs), len(names)))
pids = {e["pid"] for e in runs}
if makes is not None and len(pids) != makes:
    errors.append("spans from %d makes, not %d: %r" % (len(pids), makes, procs))
print("\n".join(errors) if errors else "trace ok: %d spans from %d make(s)" % (len(runs), len(pids)))
sys.exit(1 if errors else 0)
