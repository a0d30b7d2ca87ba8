#!/usr/bin/env python3
"""bench/profile.py - where the per-job time of the pool goes.

    python3 bench/profile.py [JOBS]        (default 2000; run after make)

For N trivial `true` jobs queued with $(async-try) at -j2, once per start
method, and for the same jobs as make targets, it prints:

  * CPU time of every process on the path: make (its own thread plus the
    plugin's I/O thread), the supervisor, each worker.  The recipe reads it
    from /proc while the pool is still up, so it excludes the `true`
    processes themselves.  Read from /proc/PID/task/*/schedstat (ns).
  * from the plugin's trace: the median run time of a job as the plugin
    sees it, the gap between one job's end and the next start on the same
    slot, and how many of the slots were busy on average.

Nothing here is a pass/fail check; it is for whoever tunes the pool.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN = os.path.join(TOP, "asynccompile.so")

CPU_RECIPE = r"""	@cpu() { t=0; for f in /proc/$$1/task/*/schedstat; do read ns _ < $$f; t=$$((t + ns)); done; echo $$t; }; \
	echo "make $$(cpu $$PPID)"; \
	for p in $$(pgrep -P $$PPID); do \
		c=$$(cat /proc/$$p/comm); [ "$$c" = sh ] && continue; \
		kids=$$(pgrep -P $$p); \
		if [ -n "$$kids" ]; then echo "supervisor $$(cpu $$p)"; \
			for k in $$kids; do echo "worker $$(cpu $$k)"; done; \
		else echo "worker $$(cpu $$p)"; fi; \
	done
"""


def env_without_make(extra):
    env = dict(os.environ, LC_ALL="C", **extra)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(k, None)
    return env


def trace_stats(path):
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    runs = sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") != "queue"),
                  key=lambda e: e["ts"])
    by_slot = {}
    for e in runs:
        by_slot.setdefault(e["tid"], []).append(e)
    gaps = [b["ts"] - (a["ts"] + a["dur"])
            for lane in by_slot.values() for a, b in zip(lane, lane[1:])]
    span = runs[-1]["ts"] + runs[-1]["dur"] - runs[0]["ts"]
    gaps.sort()
    return (statistics.median(e["dur"] for e in runs), statistics.median(gaps),
            gaps[len(gaps) * 9 // 10], sum(e["dur"] for e in runs) / span)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    d = tempfile.mkdtemp(prefix="asynccompile-profile.")
    ids = " ".join(str(i) for i in range(1, n + 1))
    with open(os.path.join(d, "async.mk"), "w") as f:
        f.write("load %s\nIDS := %s\n$(foreach i,$(IDS),$(async-try j$i,true))\n"
                "$(async-wait)\nall:\n%s" % (PLUGIN, ids, CPU_RECIPE))
    with open(os.path.join(d, "targets.mk"), "w") as f:
        f.write("IDS := %s\nT := $(addprefix j,$(IDS))\nall: $(T)\n%s.PHONY: all $(T)\n"
                "$(T): ; @true\n" % (ids, CPU_RECIPE))
    print("%d trivial jobs, make -j2; CPU in ms (excluding the jobs' own processes)" % n)
    print("%-22s %7s %11s %8s %13s %14s %13s %6s" % (
        "variant", "wall ms", "make+I/O ms", "super ms", "workers ms", "cpu us/job",
        "run/gap/p90 us", "slots"))
    for method in ("subprocess", "spawn", "fork", None):
        extra = {}
        if method:
            trace = os.path.join(d, "trace-%s.json" % method)
            cfg = os.path.join(d, "%s.yaml" % method)
            with open(cfg, "w") as f:
                f.write("workers: 2\nstart_method: %s\ntrace: %s\n" % (method, trace))
            extra["ASYNC_COMPILE_CONFIG"] = cfg
        mk = "async.mk" if method else "targets.mk"
        t0 = time.perf_counter()
        p = subprocess.run(["make", "-s", "-j2", "-f", mk], cwd=d, capture_output=True,
                           text=True, env=env_without_make(extra))
        wall = (time.perf_counter() - t0) * 1000
        if p.returncode:
            sys.exit("make failed: " + p.stderr)
        cpu = {"make": 0, "supervisor": 0, "worker": 0}
        for line in p.stdout.split("\n"):
            if line.strip():
                k, v = line.split()
                cpu[k] += int(v) / 1e6
        total = sum(cpu.values())
        tr = "%.0f/%.0f/%.0f" % trace_stats(trace)[:3] if method else "-"
        slots = "%.2f" % trace_stats(trace)[3] if method else "-"
        print("%-22s %7.0f %11.0f %8.0f %13.0f %14.0f %13s %6s" % (
            method or "make targets (no pool)", wall, cpu["make"], cpu["supervisor"],
            cpu["worker"], total * 1000.0 / n, tr, slots))
    subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
