"""bench/timer.py - run command variants in alternating rounds and report
medians.

Rounds alternate (A B C D A B C D ...) so that slow drift of the machine
(thermal, page cache, a neighbour's load) hits every variant alike instead
of whichever happened to run last.  Each variant may have a prep step that
runs untimed before every timed run (to delete outputs), and a check that
runs after the last run (to verify the outputs).
"""

import os
import statistics
import subprocess
import time


class BenchError(Exception):
    """A workload could not be measured; the message says why."""


class Variant:
    """One way of doing the work.

    key    short name used by the checks ("a", "shell", ...)
    label  what the table prints
    argv   the command timed
    prep   callable run untimed before every run, or None
    cwd    directory to run in
    stdin  path for standard input (default /dev/null)
    stdout path to collect standard output (default: captured, kept in
           self.last_stdout)
    pass_fds  descriptors the command inherits (default none)
    """

    def __init__(self, key, label, argv, prep=None, cwd=None, stdin=None,
                 stdout=None, env=None, pass_fds=()):
        self.key = key
        self.label = label
        self.argv = argv
        self.prep = prep
        self.cwd = cwd
        self.stdin = stdin
        self.stdout = stdout
        self.env = env
        self.pass_fds = pass_fds
        self.times = []
        self.last_stdout = b""

    def run_once(self):
        if self.prep:
            self.prep()
        fin = open(self.stdin or os.devnull, "rb")
        fout = open(self.stdout, "wb") if self.stdout else subprocess.PIPE
        try:
            t0 = time.perf_counter()
            p = subprocess.run(self.argv, cwd=self.cwd, stdin=fin,
                               stdout=fout, stderr=subprocess.PIPE,
                               env=self.env, pass_fds=self.pass_fds)
            t1 = time.perf_counter()
        finally:
            fin.close()
            if self.stdout:
                fout.close()
        if p.returncode != 0:
            tail = p.stderr.decode(errors="replace").strip().splitlines()[-15:]
            raise BenchError("%s: exited %d: %s\n    %s" % (
                self.label, p.returncode, " ".join(self.argv),
                "\n    ".join(tail)))
        if not self.stdout:
            self.last_stdout = p.stdout
        return t1 - t0

    def median(self):
        return statistics.median(self.times)


def paired_ratio(v, base):
    """Median over rounds of v's time / base's time in the same round.
    Neighbouring runs share the machine's state, so this ratio shrugs off
    load that comes and goes better than a ratio of medians does."""
    return statistics.median(a / b for a, b in zip(v.times, base.times))


def paired_spread(v, base):
    """The lowest and highest per-round ratio behind paired_ratio(): how
    far one round can be from the median on this machine."""
    rs = [a / b for a, b in zip(v.times, base.times)]
    return min(rs), max(rs)


def busy_cpus(seconds=0.5):
    """CPUs the machine kept busy over `seconds` while we run nothing:
    other people's work that our timed runs compete with.  (Measuring it
    during the runs would need our own share subtracted, and the pool's
    processes are not reaped by make, so rusage cannot tell us that.)
    None when /proc/stat is unreadable."""
    def busy():
        try:
            with open("/proc/stat") as f:
                w = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        # user nice system idle iowait irq softirq steal
        return (sum(w[:8]) - w[3] - w[4]) / os.sysconf("SC_CLK_TCK")

    b0, t0 = busy(), time.perf_counter()
    time.sleep(seconds)
    b1, t1 = busy(), time.perf_counter()
    if b0 is None or b1 is None:
        return None
    return max(0.0, b1 - b0) / (t1 - t0)


def measure(variants, rounds, warmup=1, on_run=None):
    """Time every variant `rounds` times, alternating, after `warmup`
    untimed rounds.  on_run(variant, seconds) sees every timed run."""
    for _ in range(warmup):
        for v in variants:
            v.run_once()
    for _ in range(rounds):
        for v in variants:
            t = v.run_once()
            v.times.append(t)
            if on_run:
                on_run(v, t)
    return {v.key: v.median() for v in variants}


def table(headers, rows, indent="  "):
    """Plain-text table; the first column is left-aligned, the rest right."""
    cols = [headers] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cols) for i in range(len(headers))]
    out = []
    for n, r in enumerate(cols):
        cells = [r[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        out.append(indent + "  ".join(cells).rstrip())
        if n == 0:
            out.append(indent + "  ".join("-" * w for w in widths))
    return out


def verdict(ok, text, detail):
    return "  %s  %s  (%s)" % ("PASS" if ok else "MISS", text, detail)
