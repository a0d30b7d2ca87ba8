#!/usr/bin/env python3
"""bench/pair.py - two builds of the plugin against stock make, in paired
rounds, on workload 8's module (a one-file module against Debian's kernel
headers, `make -j2 -C HEADERS M=DIR modules`, no-op) through each build's
Kbuild fragment, cached (the fragment's default).  Not part of `make
bench`: it answers "did this change make the cached path faster?" on a
shared machine, where only paired ratios mean anything.

    python3 bench/pair.py --base TOP_A --new TOP_B [--rounds 15] [--out DIR]

TOP_A and TOP_B are built trees (e.g. `git archive main | tar -x`, then
make).  Each variant has a store of its own under DIR; three warm-up runs
each fill the caches first.  Prints each variant's median and its paired
ratio to stock, and the median over rounds of base time / new time.
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import MODULE_C  # noqa: E402  (workload 8's module)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "pair"))
    ap.add_argument("--headers", default=os.environ.get("BENCH_HEADERS", ""))
    o = ap.parse_args()
    heads = sorted(glob.glob("/usr/src/linux-headers-*-amd64"))
    headers = o.headers or (heads[-1] if heads else "")
    if not os.path.exists(os.path.join(headers, "Makefile")):
        sys.exit("pair.py: no kernel headers (apt-get install linux-headers-amd64)")
    env0 = {k: v for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GNUMAKEFLAGS", "MAKEFILES", "_")}
    env0["LC_ALL"] = "C"
    env0["PATH"] = os.pathsep.join(p for p in env0.get("PATH", "").split(os.pathsep)
                                   if not p.rstrip("/").endswith("/.cargo/bin"))
    tops = {"base": os.path.abspath(o.base), "new": os.path.abspath(o.new)}
    vs = {}
    for k in ("stock", "base", "new"):
        t = os.path.join(o.out, k)
        os.makedirs(t, exist_ok=True)
        with open(os.path.join(t, "hello.c"), "w") as f:
            f.write(MODULE_C)
        with open(os.path.join(t, "Kbuild"), "w") as f:
            f.write("obj-m := hello.o\n")
        env = dict(env0)
        if k != "stock":
            x = os.path.join(o.out, "xdg-" + k)
            os.makedirs(x, exist_ok=True)
            with open(os.path.join(x, "asynccompile.yaml"), "w") as f:
                f.write("workers: 2\nstart_method: subprocess\n")
            env.update(XDG_CACHE_HOME=x, ASYNC_COMPILE_CONFIG=os.path.join(x, "asynccompile.yaml"),
                       MAKEFILES=os.path.join(tops[k], "asynccompile-kbuild.mk"))
        vs[k] = (["make", "-s", "-j2", "-C", headers, "M=" + t, "modules"], env)

    def run(k):
        argv, env = vs[k]
        t0 = time.monotonic()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.monotonic() - t0

    for k in vs:
        for _ in range(3):
            run(k)
    times = {k: [] for k in vs}
    for r in range(o.rounds):
        for k in (list(vs) if r % 2 == 0 else list(reversed(list(vs)))):
            times[k].append(run(k))
    R = range(o.rounds)
    for k in vs:
        print("%-6s median %8.1f ms  min %8.1f ms  paired vs stock %.2fx" % (
            k, 1000 * statistics.median(times[k]), 1000 * min(times[k]),
            statistics.median([times["stock"][i] / times[k][i] for i in R])))
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print("new vs base, paired: %.3fx (%d rounds; load average %s)" % (
        statistics.median([times["base"][i] / times["new"][i] for i in R]), o.rounds, " ".join(load)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
