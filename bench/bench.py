#!/usr/bin/env python3
"""bench/bench.py - the workloads behind `make bench`.

    python3 bench/bench.py --top DIR --out DIR [--busybox TREE] [--lua TREE]
                           [--linux TREE --linux-version X.Y]

bench/run.sh fetches the third-party sources and calls this.  Every
workload times its variants in the same run, alternating, and prints
medians, ratios against a baseline, and PASS/MISS against the targets.
The text also goes to OUT/results.txt.

Environment (all optional):
    BENCH_ROUNDS        timed rounds per workload (default 7)
    BENCH_WARMUP        untimed rounds first (default 1)
    BENCH_SCALE_ROUNDS  rounds for the scale workload (default 3)
    BENCH_JOBS          trivial jobs in the overhead workload (default 2000)
    BENCH_SCALE         job counts for the scale workload (default 100 1000 10000)
    BENCH_J             make -jN and xargs -P N (default 2)
    BENCH_MAKE          make to run (default make)
    BENCH_CC            compiler (default cc)
    BENCH_START_METHOD  pool start method (default subprocess)
    BENCH_ONLY          run only these workloads, e.g. "1 3" (default "1 2 3 4 5 6 7 8 9 10 11 12")
    BENCH_LOAD_ROUNDS   rounds of the load-cost workload (default 120)
    BENCH_HEADERS       kernel headers for the module workload (default: the
                        newest /usr/src/linux-headers-*-amd64)
    BENCH_TRACE_PROBES  probes per round in the tracer workload (default 40)
    BENCH_WAIT_J        make -jN of workloads 10 and 11, the recipe waits' (default 4)
    BENCH_QUIET_WAIT    wait up to this many seconds before each workload for
                        other processes to use under 0.25 CPUs (default 0)
"""

import argparse
import datetime
import glob
import os
import platform
import re
import shutil
import struct
import subprocess
import sys
import time
import types

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timer import BenchError, Variant, busy_cpus, measure, paired_ratio, paired_spread, table, verdict  # noqa: E402
import waits  # noqa: E402


def env_int(name, default):
    v = os.environ.get(name, "")
    return int(v) if v.strip() else default


ROUNDS = env_int("BENCH_ROUNDS", 7)
WARMUP = env_int("BENCH_WARMUP", 1)
SCALE_ROUNDS = env_int("BENCH_SCALE_ROUNDS", 3)
NJOBS = env_int("BENCH_JOBS", 2000)
J = env_int("BENCH_J", 2)
SCALE = [int(x) for x in os.environ.get("BENCH_SCALE", "100 1000 10000").split()]
MAKE = os.environ.get("BENCH_MAKE", "make")
CC = os.environ.get("BENCH_CC", "cc")
START = os.environ.get("BENCH_START_METHOD", "subprocess")
ONLY = os.environ.get("BENCH_ONLY", "1 2 3 4 5 6 7 8 9 10 11 12").split()
LOAD_ROUNDS = env_int("BENCH_LOAD_ROUNDS", 120)
QUIET_WAIT = env_int("BENCH_QUIET_WAIT", 0)
QUIET = 0.25  # CPUs of background load above which a workload is contended


class Report:
    """Lines printed as they come and kept for results.txt."""

    def __init__(self):
        self.lines = []

    def __call__(self, *lines):
        for line in lines:
            print(line, flush=True)
            self.lines.append(line)


say = Report()


RATIO_NOTE = ("  speedup = baseline median / median; paired = median over rounds of %s's time / the\n"
              "  variant's time in the same round (robust to load that comes and goes; verdicts use it)")


def ms(sec):
    return "%.1f" % (sec * 1000.0)


def speedup(base, t):
    return "%.2fx" % (base / t) if t > 0 else "-"


def timed(vs, rounds, warmup, on_run=None):
    """measure(), plus how busy the rest of the machine was before and after."""
    before = busy_cpus()
    if QUIET_WAIT > 0 and before is not None and before > QUIET:
        t0 = time.monotonic()
        while before > QUIET and time.monotonic() - t0 < QUIET_WAIT:
            before = busy_cpus(1.0)
        say("  (waited %.0fs for the machine to quieten: background now %.2f CPUs)"
            % (time.monotonic() - t0, before))
    med = measure(vs, rounds, warmup, on_run)
    return med, (before, busy_cpus())


def background(load):
    if None in load:
        return "  background: unknown (no /proc/stat)"
    line = ("  background: other processes kept %.2f / %.2f of %d CPUs busy just before / after"
            % (load[0], load[1], os.cpu_count()))
    if max(load) > QUIET:
        line += "\n  CONTENDED: the -j%d variants could not have %d CPUs to themselves; treat ratios with care" % (J, J)
    return line


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def bench_env(cfg):
    """make must not see the jobserver or flags of the make running us."""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES",
              "GNUMAKEFLAGS", "MAKEFILES"):
        env.pop(k, None)
    env["ASYNC_COMPILE_CONFIG"] = cfg
    env["LC_ALL"] = "C"
    # rustup's proxies (~/.cargo/bin) read /proc/self/maps, which makes
    # Kbuild's `rustc --version` opaque and run every time: a developer
    # machine's quirk, not Debian's rustc
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.rstrip("/").endswith("/.cargo/bin"))
    return env


def make_argv(mk, *extra):
    return [MAKE, "--no-print-directory", "-s", "-j%d" % J, "-f", mk] + list(extra)


# ---------------------------------------------------------------- probes

PROBE_RE = re.compile(r"\$\(call\s+(host)?cc-(option|disable-warning)\s*,\s*([^,)]*)")

# Used only when the busybox source package cannot be fetched.
FALLBACK_FLAGS = [
    "-std=gnu99", "-Wall", "-Wshadow", "-Wwrite-strings", "-Wundef",
    "-Wstrict-prototypes", "-Wunused -Wunused-parameter",
    "-Wmissing-prototypes -Wmissing-declarations", "-Wno-format-security",
    "-Wdeclaration-after-statement", "-finline-limit=0",
    "-fno-guess-branch-probability", "-funsigned-char", "-static-libgcc",
    "-falign-functions=1", "-fno-unwind-tables", "-fno-builtin-printf",
    "-Os", "-O2", "-g", "-march=i486 -mtune=i386", "-malign-data=abi",
    "-mpreferred-stack-boundary=2", "-Wno-string-plus-int",
    "-fsanitize=address", "-fvisibility=hidden", "-Wimplicit-fallthrough=5",
    "-fno-such-flag", "-Wno-such-warning-either", "-mno-such-target-flag",
]


def busybox_probes(tree):
    """The cc-option probe arguments of BusyBox's build, in file order,
    without duplicates and without commented-out lines."""
    files = [os.path.join(tree, "Makefile.flags")]
    files += sorted(glob.glob(os.path.join(tree, "arch", "*", "Makefile")))
    files.append(os.path.join(tree, "Makefile"))
    probes, seen = [], set()
    for path in files:
        if not os.path.exists(path):
            continue
        with open(path, errors="replace") as f:
            for line in f:
                if line.lstrip().startswith("#"):
                    continue
                for m in PROBE_RE.finditer(line):
                    arg = " ".join(m.group(3).split())
                    if m.group(2) == "disable-warning":
                        arg = "-W" + arg
                    if arg and arg not in seen:
                        seen.add(arg)
                        probes.append(arg)
    return probes


def accepted_ids(path):
    with open(path) as f:
        return sorted(int(w) for w in f.read().split())


def workload_probes(o):
    say("", "== 1. Parse-time compiler probes ==")
    source = None
    flags = []
    if o.busybox:
        flags = busybox_probes(o.busybox)
        if flags:
            ver = open(os.path.join(o.busybox, ".fetched")).read().strip()[:-4]
            source = "BusyBox %s: cc-option/hostcc-option calls in Makefile.flags, arch/*/Makefile, Makefile" % ver
    if not flags:
        flags = FALLBACK_FLAGS
        source = "FALLBACK LIST (busybox source unavailable): %d hand-picked gcc flags, NOT BusyBox's" % len(flags)
    say("  source: " + source)
    say("  probe:  %s -Werror FLAGS -c -x c /dev/null -o /dev/null   (%d probes)" % (CC, len(flags)),
        "  (a), (b), (d) wrap it in sh to turn the status into text; (c) needs no wrapper, so the pool",
        "  execs the compiler directly, as make does for a simple recipe line")

    d = fresh_dir(os.path.join(o.out, "w1-probes"))
    ids = list(range(1, len(flags) + 1))
    cmd = {i: "%s -Werror %s -c -x c /dev/null -o /dev/null" % (CC, flags[i - 1]) for i in ids}
    idlist = " ".join(map(str, ids))

    serial = ["P%d := $(shell %s >/dev/null 2>&1 && echo y)" % (i, cmd[i]) for i in ids]
    serial.append("$(file >accepted-a.txt,$(foreach i,%s,$(if $(filter y,$(P$i)),$i)))" % idlist)
    serial.append("all: ; @:")
    write(os.path.join(d, "serial.mk"), "\n".join(serial) + "\n")

    tg = ["all: ; @:", "R := " + " ".join("results-b/p%d.mk" % i for i in ids), "-include $(R)",
          "$(if $(strip $(foreach i,%s,$(if $(P$i),,x))),,"
          "$(file >accepted-b.txt,$(foreach i,%s,$(if $(filter y,$(P$i)),$i))))" % (idlist, idlist)]
    for i in ids:
        tg.append("results-b/p%d.mk:\n\t@if %s >/dev/null 2>&1; then echo 'P%d := y'; "
                  "else echo 'P%d := n'; fi >$@" % (i, cmd[i], i, i))
    write(os.path.join(d, "targets.mk"), "\n".join(tg) + "\n")

    asy = ["load " + o.plugin] + ["$(async-try p%d,%s)" % (i, cmd[i]) for i in ids]
    asy.append("$(async-wait)")
    asy.append("$(file >accepted-c.txt,$(foreach i,%s,$(if $(filter 0,$(p$i.status)),$i)))" % idlist)
    asy.append("all: ; @:")
    write(os.path.join(d, "async.mk"), "\n".join(asy) + "\n")

    write(os.path.join(d, "cmds-d.txt"), "".join(
        "if %s >/dev/null 2>&1; then echo %d; fi\n" % (cmd[i], i) for i in ids))

    def prep(k):
        def f():
            p = os.path.join(d, "accepted-%s.txt" % k)
            if os.path.exists(p):
                os.unlink(p)
            if k == "b":
                fresh_dir(os.path.join(d, "results-b"))
        return f

    env = o.env
    vs = [
        Variant("a", "(a) serial $(shell) per probe, as Kbuild [baseline]",
                make_argv("serial.mk"), prep("a"), d, env=env),
        Variant("b", "(b) target per probe + -include, make -j%d" % J,
                make_argv("targets.mk"), prep("b"), d, env=env),
        Variant("c", "(c) $(async-try) per probe + one $(async-wait), -j%d" % J,
                make_argv("async.mk"), prep("c"), d, env=env),
        Variant("d", "(d) xargs -P %d sh -c (floor)" % J,
                ["xargs", "-d", "\n", "-n", "1", "-P", str(J), "sh", "-c"], prep("d"), d,
                stdin=os.path.join(d, "cmds-d.txt"), stdout=os.path.join(d, "accepted-d.txt"), env=env),
    ]
    med, others = timed(vs, ROUNDS, WARMUP)
    base = med["a"]
    pr = {v.key: paired_ratio(v, vs[0]) for v in vs}
    say(*table(["variant", "median ms", "min ms", "max ms", "speedup", "paired"],
               [[v.label, ms(med[v.key]), ms(min(v.times)), ms(max(v.times)),
                 speedup(base, med[v.key]), "%.2fx" % (1 / pr[v.key])] for v in vs]))
    say(*(RATIO_NOTE % "(a)").split("\n"), *background(others).split("\n"))

    answers = {k: accepted_ids(os.path.join(d, "accepted-%s.txt" % k)) for k in "abcd"}
    same = all(answers[k] == answers["a"] for k in "bcd")
    acc = answers["a"]
    say("  answers: %s -- %d of %d probes accepted by %s in every variant"
        % ("IDENTICAL" if same else "DIFFERENT", len(acc), len(ids), CC) if same else
        "  answers: DIFFERENT: " + "; ".join("%s=%s" % (k, answers[k]) for k in "abcd"))
    rejected = [flags[i - 1] for i in ids if i not in acc]
    if rejected:
        say("  rejected: " + ", ".join(rejected))
    say("  targets:",
        verdict(1 / pr["c"] >= 2.0, "async >= 2x faster than serial $(shell)",
                "paired %.2fx" % (1 / pr["c"])),
        verdict(pr["c"] < pr["b"], "async faster than targets + -include",
                "paired %.2fx vs %.2fx" % (1 / pr["c"], 1 / pr["b"])),
        verdict(pr["c"] <= 1.10 * pr["d"], "async within 10% of xargs -P",
                "paired %+.1f%%" % (100.0 * (pr["c"] / pr["d"] - 1))),
        verdict(same, "all variants give identical answers",
                "%d accepted" % len(acc)))
    return same


# ---------------------------------------------------------------- overhead

def ids_line(n):
    return "IDS := " + " ".join(str(i) for i in range(1, n + 1))


def workload_overhead(o):
    n = NJOBS
    say("", "== 2. Per-job overhead: %d trivial jobs (true) ==" % n)
    d = fresh_dir(os.path.join(o.out, "w2-overhead"))
    write(os.path.join(d, "shell.mk"),
          ids_line(n) + "\n$(foreach i,$(IDS),$(shell true))\nall: ; @:\n")
    write(os.path.join(d, "targets.mk"),
          ids_line(n) + "\nT := $(addprefix j,$(IDS))\nall: $(T)\n.PHONY: all $(T)\n$(T): ; @true\n")
    write(os.path.join(d, "async.mk"),
          "load %s\n%s\n$(foreach i,$(IDS),$(async-try j$i,true))\n$(async-wait)\nall: ; @:\n"
          % (o.plugin, ids_line(n)))
    write(os.path.join(d, "targets-sh.mk"),
          ids_line(n) + "\nT := $(addprefix j,$(IDS))\nall: $(T)\n.PHONY: all $(T)\n$(T): ; @true;\n")
    write(os.path.join(d, "empty.mk"), "all: ; @:\n")
    write(os.path.join(d, "async-one.mk"),
          "load %s\n$(async-try j0,true)\n$(async-wait)\nall: ; @:\n" % o.plugin)
    write(os.path.join(d, "xargs-in.txt"), "".join("%d\n" % i for i in range(n)))

    env = o.env
    vs = [
        Variant("shell", "$(shell true) serially while parsing", make_argv("shell.mk"), cwd=d, env=env),
        Variant("targets", "one target per job, make -j%d [baseline]" % J, make_argv("targets.mk"), cwd=d, env=env),
        Variant("async", "$(async-try) each + $(async-wait), -j%d" % J, make_argv("async.mk"), cwd=d, env=env),
        Variant("xargs", "xargs -n 1 -P %d true (floor)" % J,
                ["xargs", "-n", "1", "-P", str(J), "true"], cwd=d,
                stdin=os.path.join(d, "xargs-in.txt"), env=env),
        Variant("targets_sh", "ref: target per job, recipe 'true;' (via sh)", make_argv("targets-sh.mk"), cwd=d, env=env),
        Variant("async_spawn", "ref: async as above, start_method spawn", make_argv("async.mk"), cwd=d,
                env=dict(env, ASYNC_COMPILE_CONFIG=o.cfg_for("spawn"))),
        Variant("async_fork", "ref: async as above, start_method fork", make_argv("async.mk"), cwd=d,
                env=dict(env, ASYNC_COMPILE_CONFIG=o.cfg_for("fork"))),
        Variant("empty", "ref: make, empty makefile", make_argv("empty.mk"), cwd=d, env=env),
        Variant("one", "ref: make + load + 1 async-try", make_argv("async-one.mk"), cwd=d, env=env),
    ]
    med, others = timed(vs, ROUNDS, WARMUP)
    pr = {v.key: paired_ratio(v, vs[1]) for v in vs}
    fixed = {"shell": med["empty"], "targets": med["empty"], "targets_sh": med["empty"],
             "async": med["one"], "async_spawn": med["one"], "async_fork": med["one"], "xargs": 0.0}

    def per_job(k):
        return (med[k] - fixed[k]) * 1e6 / n

    base = per_job("targets")
    rows = []
    for v in vs[:7]:
        rows.append([v.label, ms(med[v.key]), "%.0f" % (med[v.key] * 1e6 / n),
                     "%.0f" % per_job(v.key), "%.2f" % (per_job(v.key) / base), "%.2f" % pr[v.key]])
    for v in vs[7:]:
        rows.append([v.label, ms(med[v.key]), "", "", "", ""])
    say(*table(["variant", "median ms", "us/job", "net us/job", "vs targets", "paired"], rows))
    say("  net us/job = (median - fixed cost of the matching ref row) / %d jobs" % n,
        "  make, the pool and xargs all exec true directly (no shell); the 'true;' row shows a shell's cost",
        "  vs targets = net us/job over the baseline's; paired = median over rounds of time / the",
        "  baseline's time in the same round (robust to load that comes and goes; the verdict uses it)",
        *background(others).split("\n"),
        "  targets:",
        verdict(pr["async"] <= 1.0,
                "async per-job overhead no worse than make's own per-target spawning",
                "%.0f vs %.0f us/job net; paired %.3f, rounds %.3f-%.3f"
                % ((per_job("async"), per_job("targets"), pr["async"]) + paired_spread(vs[2], vs[1]))))
    return True


# ---------------------------------------------------------------- lua

LUA_CFLAGS = "-O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -I."


def workload_lua(o):
    say("", "== 3. Real C project under -j%d: Lua ==" % J)
    if not o.lua:
        say("  SKIPPED: the lua5.4 source package could not be fetched (see above)")
        return False
    src = os.path.join(o.lua, "src")
    ver = open(os.path.join(o.lua, ".fetched")).read().strip()[:-4]
    objs = [os.path.basename(p)[:-2] + ".o" for p in sorted(glob.glob(os.path.join(src, "*.c")))
            if os.path.basename(p) != "luac.c"]
    say("  source: %s, %d files of src/*.c (all but luac.c) -> lua; CFLAGS %s"
        % (ver, len(objs), LUA_CFLAGS))
    head = "CC := %s\nSRC := %s\nCFLAGS := %s\nOBJS := %s\n" % (CC, src, LUA_CFLAGS, " ".join(objs))
    link = "$(CC) -o $@ $(OBJS) -lm -ldl"
    dirs = {}
    for k in ("make", "async"):
        dirs[k] = fresh_dir(os.path.join(o.out, "w3-lua-" + k))
        # The one generated config header Debian's luaconf.h wants.
        arch = subprocess.run([CC, "-dumpmachine"], capture_output=True, text=True).stdout.strip()
        write(os.path.join(dirs[k], "lua5.4-deb-multiarch.h"),
              '#define DEB_HOST_MULTIARCH "%s"\n' % arch)
    write(os.path.join(dirs["make"], "build.mk"), head +
          "lua: $(OBJS)\n\t%s\n%%.o: $(SRC)/%%.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n" % link)
    write(os.path.join(dirs["async"], "build.mk"), "load %s\n" % o.plugin + head +
          "lua:\n\t$(foreach o,$(OBJS),$(async-compile $o,$(CC) $(CFLAGS) -c $(SRC)/$(o:.o=.c) -o $o))$(async-wait)\n"
          "\t%s\n" % link)

    def prep(k):
        def f():
            for p in glob.glob(os.path.join(dirs[k], "*.o")) + [os.path.join(dirs[k], "lua")]:
                if os.path.exists(p):
                    os.unlink(p)
        return f

    vs = [Variant("make", "make's pattern rules, make -j%d [baseline]" % J,
                  make_argv("build.mk"), prep("make"), dirs["make"], env=o.env),
          Variant("async", "one recipe: async-compile each + wait, link, -j%d" % J,
                  make_argv("build.mk"), prep("async"), dirs["async"], env=o.env)]
    med, others = timed(vs, ROUNDS, WARMUP)
    pr = {v.key: paired_ratio(v, vs[0]) for v in vs}
    say(*table(["variant", "median ms", "min ms", "max ms", "vs make", "paired"],
               [[v.label, ms(med[v.key]), ms(min(v.times)), ms(max(v.times)),
                 "%.3f" % (med[v.key] / med["make"]), "%.3f" % pr[v.key]] for v in vs]))
    say("  vs make = ratio of medians; paired = median over rounds of time / make's time in the same round",
        *background(others).split("\n"))
    works = {}
    for k in dirs:
        p = subprocess.run([os.path.join(dirs[k], "lua"), "-e", "print(1+1)"],
                           capture_output=True, text=True)
        works[k] = p.returncode == 0 and p.stdout.strip() == "2"
    say("  binaries: " + ", ".join("%s: lua -e 'print(1+1)' -> %s" % (k, "2 (works)" if works[k] else "BROKEN")
                                   for k in dirs))
    say("  targets:",
        verdict(pr["async"] <= 1.05, "async build within 5%% of make's own -j%d" % J,
                "paired %+.1f%%" % (100.0 * (pr["async"] - 1))),
        verdict(all(works.values()), "both builds produce a working lua", "print(1+1)"))
    return all(works.values())


# ---------------------------------------------------------------- scale

def workload_scale(o):
    say("", "== 4. Scale: N queued $(async-try) true jobs, one $(async-wait), -j%d ==" % J)
    d = fresh_dir(os.path.join(o.out, "w4-scale"))
    vs = []
    for n in [0] + SCALE:
        mk = "scale-%d.mk" % n
        write(os.path.join(d, mk),
              "load %s\n%s\n$(foreach i,$(IDS),$(async-try j$i,true))\n$(async-wait)\n"
              "all: ; @grep VmHWM /proc/$$PPID/status\n" % (o.plugin, ids_line(n)))
        vs.append(Variant(n, "%d" % n, make_argv(mk), cwd=d, env=o.env))
    rss = {v.key: [] for v in vs}

    def on_run(v, _t):
        m = re.search(rb"VmHWM:\s*(\d+)\s*kB", v.last_stdout)
        if not m:
            raise BenchError("scale %d: no VmHWM line from make's recipe" % v.key)
        rss[v.key].append(int(m.group(1)))

    med, others = timed(vs, SCALE_ROUNDS, min(WARMUP, 1), on_run)
    rmed = {k: sorted(r)[len(r) // 2] for k, r in rss.items()}
    rows = []
    prev = None
    steps = []
    for v in vs:
        n = v.key
        row = [str(n), ms(med[n]), "%.1f" % (med[n] * 1e6 / n) if n else "",
               str(rmed[n]), "%.0f" % ((rmed[n] - rmed[0]) * 1024.0 / n) if n else ""]
        if prev is not None:
            dn = n - prev
            dt = (med[n] - med[prev]) * 1e6 / dn
            dr = (rmed[n] - rmed[prev]) * 1024.0 / dn
            steps.append((prev, n, dt, dr))
            row += ["%.1f" % dt, "%.0f" % dr]
        else:
            row += ["", ""]
        rows.append(row)
        prev = n
    say(*table(["jobs", "median ms", "us/job", "make peak RSS kB", "B/job vs 0",
                "step us/job", "step B/job"], rows))
    say("  peak RSS is make's own VmHWM (read by the recipe from /proc/$PPID/status), median of %d rounds"
        % SCALE_ROUNDS,
        "  step = growth from the previous row divided by the added jobs; linear means the steps stay flat",
        *background(others).split("\n"))
    if len(steps) >= 3:
        a, b = steps[-2], steps[-1]
        say("  targets:",
            verdict(b[2] <= 1.5 * a[2], "time per job stays flat (last step within 1.5x of the one before)",
                    "%.1f vs %.1f us/job" % (b[2], a[2])),
            verdict(b[3] <= 1.5 * max(a[3], 1.0), "memory per job stays flat (last step within 1.5x)",
                    "%.0f vs %.0f B/job" % (b[3], a[3])))
    return True


# ---------------------------------------------------------------- Kbuild trees through $(async-shell)

SPEC_WORDS = ("speculated", "spec_hits", "spec_misses", "spec_unused", "memo_hits",
              "cache_hits", "cache_misses")

# Read after a tree's own makefiles (-f Makefile -f dump.mk): writes the
# final value of each flag variable, then the plugin's counters (empty
# when the plugin is not loaded: $(async-stats) is then an unset variable).
DUMP_MK = """# written by bench/bench.py
$(file >%(out)s)
$(foreach v,%(vars)s,$(file >>%(out)s,$v=$($v)))
$(file >>%(out)s,stats=$(async-stats))
"""


def quiet_run(argv, cwd, env, what):
    p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        tail = p.stdout.decode(errors="replace").strip().splitlines()[-15:]
        raise BenchError("%s: exited %d: %s (in %s)\n    %s" % (
            what, p.returncode, " ".join(argv), cwd, "\n    ".join(tail)))
    return p.stdout.decode(errors="replace")


def patch_dropin(path, names, plugin):
    """The whole adoption recipe: in the definitions of `names` (each
    exactly once), `$(shell` becomes `$(async-shell`, and one load line
    goes first.  Unlinks before writing: the tree may be a hard-linked
    copy whose other names must keep the original text."""
    with open(path) as f:
        text = f.read()
    pat = re.compile(r"^(%s) = \$\(shell\b" % "|".join(re.escape(n) for n in names), re.M)
    found = [m.group(1) for m in pat.finditer(text)]
    if sorted(found) != sorted(names):
        raise BenchError("%s: expected one '$(shell' definition each of %s, found %s "
                         "(another version of the tree?)" % (path, ", ".join(names), found))
    text = pat.sub(r"\1 = $(async-shell", text)
    os.unlink(path)
    write(path, "# asynccompile bench (bench/bench.py): the drop-in's one load line\n"
          "load %s\n%s" % (plugin, text))


def parse_stats(text):
    return dict(w.split("=", 1) for w in text.split() if "=" in w)


def spec_stats(st):
    return " ".join("%s=%s" % (k, st.get(k, "?")) for k in SPEC_WORDS)


def dropin_env(o, store):
    """The bench's environment with a private store for the plugin's
    records: $XDG_CACHE_HOME/asynccompile, never the user's own."""
    os.makedirs(store, exist_ok=True)
    env = dict(o.env, XDG_CACHE_HOME=store)
    env.pop("ASYNC_COMPILE_SPECULATE", None)
    return env


class EnvChange:
    """A prep hook: before every run, the environments it holds get a
    fresh OLDPWD (as after a `cd`: a directory that exists) and one
    variable no earlier run had (BENCH_NONCE_<n>=<n>, as a new terminal's
    or a script's variable); the previous run's nonce goes.  Every
    speculated or cached answer recorded under the previous environment
    then differs from the call's in two variables."""

    def __init__(self, d, *envs):
        self.d = d
        self.envs = envs
        self.n = 0

    def __call__(self):
        self.n += 1
        old = os.path.join(self.d, "oldpwd-%d" % self.n)
        os.makedirs(old, exist_ok=True)
        for e in self.envs:
            for k in [k for k in e if k.startswith("BENCH_NONCE_")]:
                del e[k]
            e["OLDPWD"] = old
            e["BENCH_NONCE_%d" % self.n] = str(self.n)


def answered(runs):
    """Every run after the first answered some call from speculation or
    the cache ($(async-stats) spec_hits, cache_hits)."""
    return all(int(st.get("spec_hits", 0)) + int(st.get("cache_hits", 0)) > 0 for _, st in runs[1:])


def forget(store):
    """Delete the plugin's records: the next run is a first run."""
    shutil.rmtree(os.path.join(store, "asynccompile"), ignore_errors=True)


class FlagsCheck:
    """Dump a tree's flag variables after its makefiles are read, in a
    run of its own (`-f Makefile -f dump.mk`, which Kbuild does not pass
    on when it re-invokes itself, hence --no-print-directory as well)."""

    def __init__(self, d, names, goals):
        self.names = names
        self.goals = goals
        self.out = os.path.join(d, "dump.out")
        self.mk = os.path.join(d, "dump.mk")
        write(self.mk, DUMP_MK % {"out": self.out, "vars": " ".join(names)})

    def run(self, tree, env, what):
        if os.path.exists(self.out):
            os.unlink(self.out)
        quiet_run([MAKE, "-j%d" % J, "--no-print-directory", "-f", "Makefile", "-f", self.mk] + self.goals,
                  tree, env, what)
        with open(self.out) as f:
            text = f.read().replace(tree, "<tree>")
        flags, _, stats = text.rpartition("stats=")
        missing = [n for n in self.names if "\n%s=" % n not in "\n" + flags]
        if missing:
            raise BenchError("%s: the dump has no %s" % (what, ", ".join(missing)))
        return flags, parse_stats(stats)

    def compare(self, stock_tree, stock_env, dropin_tree, store, env, later=2, before=None):
        """Stock once; the drop-in with its record deleted, then `later`
        runs more; before(), when given, runs ahead of each of them (and
        of stock's): an EnvChange.  Returns (stock flags, [(flags, stats)]
        per drop-in run)."""
        def run(tree, e, what):
            if before:
                before()
            return self.run(tree, e, what)
        stock, _ = run(stock_tree, stock_env, "stock flags")
        forget(store)
        runs = [run(dropin_tree, env, "drop-in flags, run %d" % (i + 1)) for i in range(1 + later)]
        return stock, runs

    def report(self, stock, runs):
        sizes = ", ".join("%s %d B" % (n, len(v)) for n, v in
                          (line.split("=", 1) for line in stock.splitlines() if "=" in line)
                          if n in self.names)
        same = [flags == stock for flags, _ in runs]
        say("  flags (%s): drop-in vs stock, first run %s; later runs %s"
            % (sizes, "IDENTICAL" if same[0] else "DIFFERENT",
               ", ".join("IDENTICAL" if s else "DIFFERENT" for s in same[1:])))
        for n, (flags, st) in enumerate(runs):
            say("  $(async-stats) %-9s %s" % ("first run:" if n == 0 else "run %d:" % (n + 1), spec_stats(st)))
            if flags != stock:
                a, b = stock.splitlines(), flags.splitlines()
                for x, y in zip(a, b):
                    if x != y:
                        say("    stock:   " + x[:200], "    drop-in: " + y[:200])
        return all(same)


def paired_table(vs, base):
    med = {v.key: v.median() for v in vs}
    pr = {v.key: paired_ratio(v, base) for v in vs}
    say(*table(["variant", "median ms", "min ms", "max ms", "speedup", "paired"],
               [[v.label, ms(med[v.key]), ms(min(v.times)), ms(max(v.times)),
                 speedup(med[base.key], med[v.key]), "%.2fx" % (1 / pr[v.key])] for v in vs]))
    return med, pr


def fetched(tree):
    with open(os.path.join(tree, ".fetched")) as f:
        return f.read().strip()


def dropin_ok(o, what):
    if re.search(r"\s", o.plugin):
        say("  SKIPPED: the plugin's path has white space, which a load line cannot take: %s" % o.plugin)
        return False
    p = subprocess.run([MAKE, "-f", "-", "all"], input="load %s\n$(info $(async-shell echo y))\nall: ; @:\n"
                       % o.plugin, capture_output=True, text=True, env=o.env)
    if p.returncode != 0 or p.stdout.strip() != "y":
        say("  SKIPPED: %s has no working $(async-shell), which %s needs" % (o.plugin, what))
        return False
    return True


LINUX_FLAGS = ["KBUILD_CFLAGS", "KBUILD_AFLAGS", "KBUILD_LDFLAGS"]


def workload_linux(o):
    say("", "== 5. Linux: no-op make -j%d scripts_basic, stock try-run vs $(async-shell) ==" % J)
    if not o.linux:
        say("  SKIPPED: linux-source-%s could not be fetched (see above)" % o.linux_version)
        return False
    missing = [t for t in ("flex", "bison") if not shutil.which(t)]
    if missing:
        say("  SKIPPED: Kconfig needs %s (apt-get install flex bison)" % " and ".join(missing))
        return False
    if platform.machine() != "x86_64":
        say("  SKIPPED: x86_64_defconfig needs an x86_64 host and compiler, this is %s" % platform.machine())
        return False
    if not dropin_ok(o, "the drop-in"):
        return False
    say("  source: %s, x86_64_defconfig, in-tree" % fetched(o.linux),
        "  drop-in: scripts/Makefile.compiler: try-run's $(shell -> $(async-shell, and `load %s`" % o.plugin,
        "  as its first line (the top Makefile and every scripts/Makefile.build sub-make include it)")
    d = os.path.join(o.out, "w5-linux")
    t0 = time.monotonic()
    # Hard-linked copies: about a second each, no extra 1.7 GB.  Kbuild
    # writes new files (.config, scripts/basic/fixdep, include/generated)
    # and patch_dropin() unlinks the one file it changes, so the fetched
    # tree is never modified.
    fresh_dir(d)
    trees = {k: os.path.join(d, k) for k in ("stock", "dropin")}
    for k, t in trees.items():
        subprocess.run(["cp", "-al", o.linux, t], check=True)
    patch_dropin(os.path.join(trees["dropin"], "scripts", "Makefile.compiler"), ["try-run"], o.plugin)
    stores = {k: os.path.join(d, "xdg-" + k) for k in ("warm", "first", "check", "setup", "cache",
                                                         "cachecheck", "cold")}
    envs = {k: dropin_env(o, s) for k, s in stores.items()}
    for k in ("cache", "cachecheck"):
        envs[k]["ASYNC_COMPILE_CONFIG"] = o.cfg_cache
    envs["cold"]["ASYNC_COMPILE_CONFIG"] = o.cfg_cold
    # the stock tree through MAKEFILES (zero edits): cache: true is its default
    fstores = {k: os.path.join(d, "xdg-frag-" + k) for k in ("warm", "first", "cache", "check", "env",
                                                              "envcheck")}
    fenvs = {k: fragment_env(o, s) for k, s in fstores.items()}
    fenvs["warm"] = fragment_env(o, fstores["warm"], o.cfg_nocache)
    # the "environment changed" rows: stock and the fragment each get a
    # fresh OLDPWD and a new variable before every run
    stock_env = dict(o.env)
    changes = {"stock": EnvChange(d, stock_env), "fenv": EnvChange(d, fenvs["env"])}
    goal = ["-j%d" % J, "scripts_basic"]
    for k, t in trees.items():
        env = envs["setup"] if k == "dropin" else o.env
        quiet_run([MAKE, "x86_64_defconfig"], t, env, "%s: make x86_64_defconfig" % k)
        quiet_run([MAKE] + goal, t, env, "%s: make scripts_basic (first build)" % k)
    changes["fenv"]()
    quiet_run([MAKE] + goal, trees["stock"], fenvs["env"], "fragment: a first run for the changed-environment row")
    say("  setup (untimed): two hard-linked copies, defconfig and a first scripts_basic in each: %.0f s"
        % (time.monotonic() - t0))

    vs = [
        Variant("stock", "stock: make -j%d scripts_basic, no-op, env changed each run [baseline]" % J,
                [MAKE] + goal, prep=changes["stock"], cwd=trees["stock"], env=stock_env),
        Variant("warm", "drop-in, warm (the last run's record)", [MAKE] + goal,
                cwd=trees["dropin"], env=envs["warm"]),
        Variant("first", "drop-in, first run (record deleted before each)", [MAKE] + goal,
                prep=lambda: forget(stores["first"]), cwd=trees["dropin"], env=envs["first"]),
        Variant("cold", "ref: drop-in, warm record, config warm: false", [MAKE] + goal,
                cwd=trees["dropin"], env=envs["cold"]),
        Variant("cache", "drop-in, cache: true, warm (answers kept)", [MAKE] + goal,
                cwd=trees["dropin"], env=envs["cache"]),
        Variant("fwarm", "stock tree + MAKEFILES fragment, warm, cache: false", [MAKE] + goal,
                cwd=trees["stock"], env=fenvs["warm"]),
        Variant("ffirst", "stock tree + fragment, first run (store deleted before each)", [MAKE] + goal,
                prep=lambda: forget(fstores["first"]), cwd=trees["stock"], env=fenvs["first"]),
        Variant("fcache", "stock tree + fragment, cached (its default)", [MAKE] + goal,
                cwd=trees["stock"], env=fenvs["cache"]),
        Variant("kv", "ref: stock make kernelversion (reads no probes): the cached floor",
                [MAKE, "kernelversion"], cwd=trees["stock"], env=o.env),
        Variant("fenv", "stock tree + fragment, cached, env changed each run (OLDPWD, a new variable)",
                [MAKE] + goal, prep=changes["fenv"], cwd=trees["stock"], env=fenvs["env"]),
    ]
    _, others = timed(vs, ROUNDS, WARMUP)
    med, pr = paired_table(vs, vs[0])
    say(*(RATIO_NOTE % "stock").split("\n"), *pool_note(trees["stock"], o.env, ["scripts_basic"], stores["warm"]),
        *background(others).split("\n"))

    fc = FlagsCheck(d, LINUX_FLAGS, ["scripts_basic"])
    stock, runs = fc.compare(trees["stock"], o.env, trees["dropin"], stores["check"], envs["check"])
    probes = sum(int(runs[0][1].get(k, 0)) for k in ("spec_misses", "spec_hits"))
    say("  stock: %.0f ms of the %.0f ms no-op go to reading the makefiles beyond what kernelversion needs;"
        % (1000 * (med["stock"] - med["kv"]), 1000 * med["stock"]),
        "  the first run's $(async-stats) counts %d $(async-shell) calls (try-run probes) in the make that reads them"
        % probes)
    same = fc.report(stock, runs)
    hits = all(int(st.get("spec_hits", 0)) > 0 for _, st in runs[1:])
    say("  with cache: true:")
    stock_c, runs_c = fc.compare(trees["stock"], o.env, trees["dropin"], stores["cachecheck"], envs["cachecheck"])
    same_c = fc.report(stock_c, runs_c)
    cached = all(int(st.get("cache_hits", 0)) > 0 for _, st in runs_c[1:])
    say("  through the fragment (the stock tree, MAKEFILES):")
    stock_f, runs_f = fc.compare(trees["stock"], o.env, trees["stock"], fstores["check"], fenvs["check"])
    same_f = fc.report(stock_f, runs_f)
    say("  through the fragment, a fresh OLDPWD and a new variable before every run (stock's too):")
    echange = EnvChange(d, dict(o.env), fenvs["envcheck"])
    stock_e, runs_e = fc.compare(trees["stock"], echange.envs[0], trees["stock"], fstores["envcheck"],
                                 fenvs["envcheck"], before=echange)
    same_e = fc.report(stock_e, runs_e)
    hits_e = answered(runs_e)
    floor = med["fcache"] - med["kv"]
    say("  targets:",
        verdict(1 / pr["fwarm"] >= 1.6, "fragment, warm: >= 1.6x, as the edited tree",
                "paired %.2fx (edited %.2fx)" % (1 / pr["fwarm"], 1 / pr["warm"])),
        verdict(1 / pr["ffirst"] >= 0.97, "fragment, first run: >= 0.97x",
                "paired %.2fx (edited %.2fx)" % (1 / pr["ffirst"], 1 / pr["first"])),
        verdict(1 / pr["fcache"] >= 10, "fragment, cached: >= 10x, as the edited tree with cache: true",
                "paired %.2fx (edited %.2fx); the floor, make kernelversion, %.2fx: cached is %.0f ms above it"
                % (1 / pr["fcache"], 1 / pr["cache"], 1 / pr["kv"], 1000 * floor)),
        verdict(1 / pr["fenv"] >= 1.3, "fragment, env changed every run (new OLDPWD and variable): >= 1.3x",
                "paired %.2fx, against stock with the same changes" % (1 / pr["fenv"])),
        verdict(same_f, "fragment: flags byte-identical to stock", "first and later runs"),
        verdict(same_e and hits_e, "fragment, env changed every run: flags byte-identical, later runs answered",
                "spec_hits + cache_hits > 0 in runs 2-%d" % len(runs_e)))
    say("  targets:",
        verdict(1 / pr["warm"] >= 1.6, "warm drop-in >= 1.6x faster than stock on %d cores" % os.cpu_count(),
                "paired %.2fx, rounds %.2fx-%.2fx" % ((1 / pr["warm"],) +
                                                     tuple(1 / r for r in reversed(paired_spread(vs[1], vs[0]))))),
        verdict(1 / pr["first"] >= 0.97, "first run (no record) not slower than 0.97x of stock",
                "paired %.2fx" % (1 / pr["first"])),
        verdict(same, "%s byte-identical to stock, first and later runs" % ", ".join(LINUX_FLAGS),
                "%d drop-in runs" % len(runs)),
        verdict(hits, "later runs are answered by speculation", "spec_hits > 0 in runs 2-%d" % len(runs)),
        verdict(1 / pr["cache"] >= 10, "cache: true, warm: >= 10x faster than stock",
                "paired %.2fx" % (1 / pr["cache"])),
        verdict(same_c and cached, "cache: true: flags byte-identical, later runs answered by the cache",
                "cache_hits > 0 in runs 2-%d" % len(runs_c)))
    return same and hits and same_c and cached and same_f and same_e and hits_e


BUSYBOX_PROBES = ["as-option", "cc-option", "hostcc-option", "cc-option-yn"]
BUSYBOX_FLAGS = ["CPPFLAGS", "CFLAGS", "AFLAGS", "LDFLAGS", "LDLIBS", "CFLAGS_busybox"]


def cmd_files(tree):
    """Every .*.cmd file Kbuild wrote: the full command line that built each object."""
    found = {}
    for root, _, files in os.walk(tree):
        for f in files:
            if f.startswith(".") and f.endswith(".cmd"):
                p = os.path.join(root, f)
                with open(p, errors="replace") as fh:
                    found[os.path.relpath(p, tree)] = fh.read().replace(tree, "<tree>")
    return found


def pool_note(tree, env, goals, store):
    """What the `warm: false` reference row is about: how many Kbuild
    sub-makes (`make -f scripts/Makefile.build obj=DIR`, counted from the
    commands V=1 prints) a no-op runs, each loading the plugin, and how
    many makes keep a record (they called $(async-shell))."""
    out = quiet_run([MAKE, "-j%d" % J, "V=1"] + goals, tree, env, "make V=1 (counting sub-makes)")
    subs = sum(1 for line in out.splitlines() if "Makefile.build obj=" in line)
    records = len(os.listdir(os.path.join(store, "asynccompile")))
    return ["  warm: false: a make starts its pool at its first job, not at load; this no-op runs %d"
            % subs, "  Kbuild sub-make(s) besides the top make, each loading the plugin; %d record(s) in the store"
            % records, "  (makes that called $(async-shell))"]


def workload_busybox(o):
    say("", "== 6. BusyBox: its Kbuild cc-option family through $(async-shell), make -j%d ==" % J)
    if not o.busybox:
        say("  SKIPPED: the busybox source package could not be fetched (see above)")
        return False
    if not dropin_ok(o, "the drop-in"):
        return False
    say("  source: %s, make defconfig" % fetched(o.busybox)[:-4],
        "  drop-in: scripts/Kbuild.include: %s's $(shell -> $(async-shell, and one load line first"
        % ", ".join(BUSYBOX_PROBES),
        "  (Makefile.flags calls them; its two link probes share a file name, bb_libtest.c, so they stay $(shell))")
    d = fresh_dir(os.path.join(o.out, "w6-busybox"))
    trees = {k: os.path.join(d, k) for k in ("stock", "dropin", "frag")}
    for t in trees.values():
        subprocess.run(["cp", "-a", o.busybox, t], check=True)
    patch_dropin(os.path.join(trees["dropin"], "scripts", "Kbuild.include"), BUSYBOX_PROBES, o.plugin)
    stores = {k: os.path.join(d, "xdg-" + k) for k in ("warm", "first", "check", "cache", "cachecheck",
                                                         "cold")}
    envs = {k: dropin_env(o, s) for k, s in stores.items()}
    envs["cold"]["ASYNC_COMPILE_CONFIG"] = o.cfg_cold
    for k in ("cache", "cachecheck"):
        envs[k]["ASYNC_COMPILE_CONFIG"] = o.cfg_cache
    # a third, unchanged copy built and rebuilt through MAKEFILES (zero edits)
    fstores = {k: os.path.join(d, "xdg-frag-" + k) for k in ("warm", "first", "cache", "check")}
    fenvs = {"warm": fragment_env(o, fstores["warm"], o.cfg_nocache),
             "first": fragment_env(o, fstores["first"]), "cache": fragment_env(o, fstores["cache"]),
             "check": fragment_env(o, fstores["check"])}
    build = {}
    for k, t in trees.items():
        env = {"dropin": envs["warm"], "frag": fenvs["warm"]}.get(k, o.env)
        quiet_run([MAKE, "defconfig"], t, env, "%s: make defconfig" % k)
        t0 = time.monotonic()
        quiet_run([MAKE, "-j%d" % J], t, env, "%s: make -j%d" % (k, J))
        build[k] = time.monotonic() - t0
    works = {}
    for k, t in trees.items():
        p = subprocess.run([os.path.join(t, "busybox"), "echo", "ok"], capture_output=True, text=True)
        works[k] = p.returncode == 0 and p.stdout == "ok\n"
    say("  full build, one run each (not alternated, not paired): stock %.1f s, drop-in %.1f s, fragment %.1f s"
        " (first runs: no record)" % (build["stock"], build["dropin"], build["frag"]),
        "  binaries: " + ", ".join("%s: ./busybox echo ok -> %s" % (k, "ok (works)" if works[k] else "BROKEN")
                                   for k in trees))
    cmds = {k: cmd_files(t) for k, t in trees.items()}
    same_cmds = cmds["stock"] == cmds["dropin"]
    same_fcmds = cmds["stock"] == cmds["frag"]
    say("  command lines through the fragment: %d .*.cmd files: %s"
        % (len(cmds["frag"]), "IDENTICAL" if same_fcmds else "DIFFERENT"))
    say("  command lines: %d .*.cmd files (every compile and link of the build): %s" % (
        len(cmds["stock"]), "IDENTICAL" if same_cmds else "DIFFERENT: %s" % ", ".join(sorted(
            p for p in set(cmds["stock"]) | set(cmds["dropin"])
            if cmds["stock"].get(p) != cmds["dropin"].get(p)))[:400]))

    note = pool_note(trees["stock"], o.env, [], stores["warm"])
    argv = [MAKE, "-j%d" % J]
    vs = [
        Variant("stock", "stock: make -j%d, no-op [baseline]" % J, argv, cwd=trees["stock"], env=o.env),
        Variant("warm", "drop-in, warm (the last run's record)", argv, cwd=trees["dropin"], env=envs["warm"]),
        Variant("first", "drop-in, first run (record deleted before each)", argv,
                prep=lambda: forget(stores["first"]), cwd=trees["dropin"], env=envs["first"]),
        Variant("cold", "ref: drop-in, warm record, config warm: false", argv, cwd=trees["dropin"],
                env=envs["cold"]),
        Variant("cache", "drop-in, cache: true, warm (answers kept)", argv, cwd=trees["dropin"],
                env=envs["cache"]),
        Variant("fwarm", "unchanged tree + MAKEFILES fragment, warm, cache: false", argv, cwd=trees["frag"],
                env=fenvs["warm"]),
        Variant("ffirst", "unchanged tree + fragment, first run (store deleted before each)", argv,
                prep=lambda: forget(fstores["first"]), cwd=trees["frag"], env=fenvs["first"]),
        Variant("fcache", "unchanged tree + fragment, cached (its default)", argv, cwd=trees["frag"],
                env=fenvs["cache"]),
    ]
    _, others = timed(vs, ROUNDS, WARMUP)
    med, pr = paired_table(vs, vs[0])
    say(*(RATIO_NOTE % "stock").split("\n"), *note, *background(others).split("\n"))
    fc = FlagsCheck(d, BUSYBOX_FLAGS, [])
    stock, runs = fc.compare(trees["stock"], o.env, trees["dropin"], stores["check"], envs["check"])
    same = fc.report(stock, runs)
    say("  with cache: true:")
    stock_c, runs_c = fc.compare(trees["stock"], o.env, trees["dropin"], stores["cachecheck"], envs["cachecheck"])
    same_c = fc.report(stock_c, runs_c)
    saved = med["stock"] - med["warm"]
    say("  through the fragment (an unchanged tree, MAKEFILES):")
    stock_f, runs_f = fc.compare(trees["stock"], o.env, trees["frag"], fstores["check"], fenvs["check"])
    same_f = fc.report(stock_f, runs_f)
    say("  targets:",
        verdict(1 / pr["fwarm"] >= 1.15, "fragment, warm: >= 1.15x stock", "paired %.2fx" % (1 / pr["fwarm"])),
        verdict(1 / pr["ffirst"] >= 0.97, "fragment, first run: >= 0.97x stock",
                "paired %.2fx" % (1 / pr["ffirst"])),
        verdict(1 / pr["fcache"] >= 1 / pr["fwarm"], "fragment, cached: at least as fast as warm",
                "paired %.2fx" % (1 / pr["fcache"])),
        verdict(same_fcmds and same_f, "fragment: the same flags as stock",
                "every .cmd file; %s on the first and later runs" % ", ".join(BUSYBOX_FLAGS)))
    say("  targets:",
        verdict(pr["warm"] < 1.0, "warm no-op make -j%d faster than stock" % J,
                "paired %.2fx, %.0f ms less per run (medians)" % (1 / pr["warm"], 1000 * saved)),
        verdict(1 / pr["first"] >= 0.97, "first run (no record) not slower than 0.97x of stock",
                "paired %.2fx" % (1 / pr["first"])),
        verdict(all(works.values()), "both builds produce a working busybox", "./busybox echo ok"),
        verdict(same_cmds and same, "the same flags as stock",
                "every .cmd file; %s on the first and later runs" % ", ".join(BUSYBOX_FLAGS)),
        verdict(pr["cache"] < pr["warm"], "cache: true, warm: faster than speculation alone",
                "paired %.2fx vs %.2fx" % (1 / pr["cache"], 1 / pr["warm"])),
        verdict(same_c, "cache: true: the same flags as stock", "first and later runs"))
    return all(works.values()) and same_cmds and same and same_c and same_fcmds and same_f


# ---------------------------------------------------------------- zero edits

def fragment_env(o, store, cfg=None):
    """MAKEFILES naming the Kbuild fragment (which loads the plugin next to
    it), with a store of the variant's own.  The fragment's default is
    cache: true; cfg names another configuration."""
    env = dropin_env(o, store)
    env["MAKEFILES"] = o.fragment
    if cfg:
        env["ASYNC_COMPILE_CONFIG"] = cfg
    else:
        env.pop("ASYNC_COMPILE_CONFIG", None)
        write(os.path.join(store, "asynccompile.yaml"), "workers: %d\nstart_method: %s\n" % (J, START))
        env["ASYNC_COMPILE_CONFIG"] = os.path.join(store, "asynccompile.yaml")
    return env


def workload_load(o):
    say("", "== 7. Nothing paid where unused: make -j%d with `load` and nothing queued ==" % J)
    d = fresh_dir(os.path.join(o.out, "w7-load"))
    write(os.path.join(d, "empty.mk"), "all: ; @:\n")
    write(os.path.join(d, "load.mk"), "load %s\nall: ; @:\n" % o.plugin)
    env = dict(o.env, XDG_CACHE_HOME=os.path.join(d, "xdg"))
    vs = [Variant("empty", "make, empty makefile [baseline]", make_argv("empty.mk"), cwd=d, env=env),
          Variant("load", "make, the same plus `load asynccompile.so`", make_argv("load.mk"), cwd=d, env=env)]
    _, others = timed(vs, LOAD_ROUNDS, 5)
    med = {v.key: v.median() for v in vs}
    diffs = sorted(b - a for a, b in zip(vs[0].times, vs[1].times))
    extra = diffs[len(diffs) // 2]
    say(*table(["variant", "median ms", "min ms", "max ms"],
               [[v.label, "%.2f" % (1000 * med[v.key]), "%.2f" % (1000 * min(v.times)),
                 "%.2f" % (1000 * max(v.times))] for v in vs]))
    say("  %d alternating rounds; the load costs %.3f ms (median over rounds of load - empty in the same round;"
        % (LOAD_ROUNDS, 1000 * extra),
        "  quartiles %.3f / %.3f ms)" % (1000 * diffs[len(diffs) // 4], 1000 * diffs[3 * len(diffs) // 4]),
        *background(others).split("\n"))
    say("  targets:", verdict(extra <= 0.0005, "a make that loads the plugin and queues nothing pays <= 0.5 ms",
                              "%.3f ms" % (1000 * extra)))
    return extra <= 0.0005


MODULE_C = """#include <linux/module.h>
#include <linux/init.h>
static int __init hello_init(void) { pr_info("hello\\n"); return 0; }
static void __exit hello_exit(void) { }
module_init(hello_init);
module_exit(hello_exit);
MODULE_LICENSE("GPL");
"""


def workload_module(o):
    say("", "== 8. Out-of-tree module against Debian's kernel headers, as DKMS builds it, through MAKEFILES ==")
    heads = sorted(glob.glob("/usr/src/linux-headers-*-amd64"))
    headers = os.environ.get("BENCH_HEADERS") or (heads[-1] if heads else "")
    if not headers or not os.path.exists(os.path.join(headers, "Makefile")):
        say("  SKIPPED: no /usr/src/linux-headers-*-amd64 (apt-get install linux-headers-amd64)")
        return False
    if not dropin_ok(o, "the fragment"):
        return False
    d = fresh_dir(os.path.join(o.out, "w8-module"))
    trees = {k: os.path.join(d, k) for k in ("stock", "frag", "envcheck")}
    for t in trees.values():
        os.makedirs(t)
        write(os.path.join(t, "hello.c"), MODULE_C)
        write(os.path.join(t, "Kbuild"), "obj-m := hello.o\n")
    stores = {k: os.path.join(d, "xdg-" + k) for k in ("warm", "first", "cache", "check", "env", "envcheck")}
    envs = {k: fragment_env(o, s) for k, s in stores.items()}
    envs["warm"] = fragment_env(o, stores["warm"], o.cfg_nocache)
    stock_env = dict(o.env)
    changes = {"stock": EnvChange(d, stock_env), "env": EnvChange(d, envs["env"])}

    def argv(t):
        return [MAKE, "-j%d" % J, "-C", headers, "M=" + t, "modules"]
    say("  headers: %s; module: one file, obj-m := hello.o; `make -j%d -C HEADERS M=DIR modules`" % (headers, J),
        "  fragment: MAKEFILES=%s (cache: true by default; the warm row says cache: false)" % o.fragment)
    quiet_run(argv(trees["stock"]), trees["stock"], o.env, "stock: first build")
    quiet_run(argv(trees["frag"]), trees["frag"], envs["check"], "fragment: first build")
    cmds = {k: cmd_files(trees[k]) for k in ("stock", "frag")}
    same_cmds = cmds["stock"] == cmds["frag"] and len(cmds["stock"]) > 0
    say("  command lines: %d .*.cmd files: %s" % (len(cmds["stock"]), "IDENTICAL" if same_cmds else "DIFFERENT"))
    changes["env"]()
    quiet_run(argv(trees["frag"]), trees["frag"], envs["env"], "fragment: a first run for the changed-environment row")
    vs = [
        Variant("stock", "stock: no-op rebuild, env changed each run [baseline]", argv(trees["stock"]),
                prep=changes["stock"], cwd=trees["stock"], env=stock_env),
        Variant("warm", "fragment, warm (last run's record), cache: false", argv(trees["frag"]),
                cwd=trees["frag"], env=envs["warm"]),
        Variant("first", "fragment, first run (store deleted before each)", argv(trees["frag"]),
                prep=lambda: forget(stores["first"]), cwd=trees["frag"], env=envs["first"]),
        Variant("cache", "fragment, cached (its default)", argv(trees["frag"]), cwd=trees["frag"],
                env=envs["cache"]),
        Variant("env", "fragment, cached, env changed each run (OLDPWD, a new variable)", argv(trees["frag"]),
                prep=changes["env"], cwd=trees["frag"], env=envs["env"]),
    ]
    _, others = timed(vs, ROUNDS, WARMUP)
    med, pr = paired_table(vs, vs[0])
    say(*(RATIO_NOTE % "stock").split("\n"), *background(others).split("\n"))
    # $(async-stats) of the top make: the headers' Makefile, then dump.mk
    say("  flags and $(async-stats) through the fragment, env changed before every run (stock's too):")
    fc = FlagsCheck(d, LINUX_FLAGS, ["M=" + trees["envcheck"], "modules"])
    echange = EnvChange(d, dict(o.env), envs["envcheck"])
    stock_e, runs_e = fc.compare(headers, echange.envs[0], headers, stores["envcheck"], envs["envcheck"],
                                 before=echange)
    same_e = fc.report(stock_e, runs_e)
    hits_e = answered(runs_e)
    say("  targets:",
        verdict(1 / pr["warm"] >= 1.5, "warm >= 1.5x stock", "paired %.2fx" % (1 / pr["warm"])),
        verdict(1 / pr["first"] >= 0.95, "first run >= 0.95x stock", "paired %.2fx" % (1 / pr["first"])),
        verdict(1 / pr["cache"] >= 4, "cached >= 4x stock", "paired %.2fx" % (1 / pr["cache"])),
        verdict(1 / pr["env"] >= 1.3, "cached, env changed every run: >= 1.3x stock with the same changes",
                "paired %.2fx" % (1 / pr["env"])),
        verdict(same_cmds, "every .cmd file identical to stock", "%d files" % len(cmds["stock"])),
        verdict(same_e and hits_e, "env changed every run: flags byte-identical, later runs answered",
                "spec_hits + cache_hits > 0 in runs 2-%d" % len(runs_e)))
    return same_cmds and same_e and hits_e


# ---------------------------------------------------------------- dkms

DKMS_NAME = "asyncc-bench"
DKMS_VER = "1.0"


def dkms_make0(o):
    """asynccompile(7)'s MAKE[0] line for dkms.conf, with this tree's
    fragment for the installed one (as t5077 takes it)."""
    with open(os.path.join(o.top, "man", "asynccompile.7")) as f:
        m = re.search(r'^MAKE\[0\]="(make MAKEFILES=\S*asynccompile\\-kbuild\.mk )(.*)"$', f.read(), re.M)
    if not m:
        raise BenchError("asynccompile(7) gives no MAKE[0] line for dkms.conf")
    return "make MAKEFILES=%s %s" % (o.fragment, m.group(2).replace("\\-", "-"))


def store_stats(o, env):
    """The store's counters (`asynccompile -s`): hits by kind and runs."""
    out = subprocess.run([os.path.join(o.top, "cli", "asynccompile"), "-s"], env=env,
                         capture_output=True, text=True).stdout
    st = {}
    for line in out.splitlines():
        m = re.match(r"\s*(cache|speculation|memo|misses)\s+(\d+)$", line)
        if m:
            st[m.group(1)] = int(m.group(2))
    if "cache" not in st:
        raise BenchError("asynccompile -s printed no counters: %s" % out.strip()[:200])
    return st


def workload_dkms(o):
    """Debian's dkms builds a one-file module with `dkms build --force`,
    stock against the module's dkms.conf naming the fragment in MAKE[0]
    (asynccompile(7), as t5077 drives it): each build copies the module
    into a fresh build directory, runs `make clean` and the build, and
    deletes the directory."""
    say("", "== 12. Debian's dkms: `dkms build --force` of a one-file module, stock vs the fragment (MAKE[0]) ==")
    dkms = shutil.which("dkms") or ("/usr/sbin/dkms" if os.access("/usr/sbin/dkms", os.X_OK) else "")
    heads = sorted(glob.glob("/usr/src/linux-headers-*-amd64"))
    headers = os.environ.get("BENCH_HEADERS") or (heads[-1] if heads else "")
    if not dkms:
        say("  SKIPPED: no dkms (apt-get install dkms)")
        return False
    if not headers or not os.path.exists(os.path.join(headers, "Makefile")):
        say("  SKIPPED: no /usr/src/linux-headers-*-amd64 (apt-get install linux-headers-amd64)")
        return False
    if os.geteuid() != 0:
        say("  SKIPPED: dkms builds as root; this is uid %d" % os.geteuid())
        return False
    if not dropin_ok(o, "the fragment"):
        return False
    kver = os.path.basename(headers)[len("linux-headers-"):]
    d = fresh_dir(os.path.join(o.out, "w12-dkms"))
    # dkms runs the `make` on PATH: the bench's make
    bindir = os.path.join(d, "bin")
    os.makedirs(bindir)
    os.symlink(shutil.which(MAKE) or MAKE, os.path.join(bindir, "make"))
    make0 = dkms_make0(o)
    keys = ("stock", "frag")
    src = {k: os.path.join(d, k, "src") for k in keys}
    tree = {k: os.path.join(d, k, "dkms") for k in keys}
    mod = {k: os.path.join(src[k], "%s-%s" % (DKMS_NAME, DKMS_VER)) for k in keys}
    build = {k: os.path.join(tree[k], DKMS_NAME, DKMS_VER, "build") for k in keys}
    kept = {k: os.path.join(d, k, "cmds") for k in keys}
    store = os.path.join(d, "xdg-frag")
    envs = {"stock": dict(o.env), "frag": fragment_env(o, store)}
    for e in envs.values():
        e.pop("MAKEFILES", None)  # MAKE[0] names the fragment
        # sign_file names no program: dkms signs nothing and makes no key
        e.update(PATH=bindir + os.pathsep + e["PATH"], sign_file="/nonexistent")
    # its summary line per make goes to make.log (dkms keeps it)
    envs["frag"]["ASYNC_COMPILE_DEBUG"] = "1"

    def conf(k, keep):
        lines = ['PACKAGE_NAME="%s"' % DKMS_NAME, 'PACKAGE_VERSION="%s"' % DKMS_VER,
                 'BUILT_MODULE_NAME[0]="%s"' % DKMS_NAME, 'DEST_MODULE_LOCATION[0]="/updates"',
                 'AUTOINSTALL="no"']
        if k == "frag":
            lines.append('MAKE[0]="%s"' % make0)
        if keep:
            # dkms deletes the build directory after the build: keep its .cmd files
            lines.append('POST_BUILD="keep-cmds.sh"')
        write(os.path.join(mod[k], "dkms.conf"), "\n".join(lines) + "\n")

    def dk(k, *args):
        return [dkms] + list(args) + ["-m", DKMS_NAME, "-v", DKMS_VER, "--dkmstree", tree[k],
                                      "--sourcetree", src[k]]

    def build_argv(k):
        return dk(k, "build", "-k", kver, "--kernelsourcedir", headers, "--force")

    for k in keys:
        os.makedirs(mod[k])
        os.makedirs(tree[k])
        write(os.path.join(mod[k], DKMS_NAME + ".c"), MODULE_C)
        write(os.path.join(mod[k], "Kbuild"), "obj-m := %s.o\n" % DKMS_NAME)
        write(os.path.join(mod[k], "keep-cmds.sh"),
              "#!/bin/sh\nrm -rf '%s' && mkdir '%s' && cp -p .*.cmd '%s/'\n" % ((kept[k],) * 3))
        os.chmod(os.path.join(mod[k], "keep-cmds.sh"), 0o755)
        conf(k, True)
    say("  dkms: %s; headers: %s; module: one file, obj-m := %s.o; dkms.conf as asynccompile(7) says:"
        % (dkms, headers, DKMS_NAME),
        "  stock: dkms's default make command; fragment: MAKE[0]=\"%s\"" % make0.replace(o.top, "<top>"),
        "  each build: a fresh copy of the module in the dkms tree's build directory, `make clean`, the build;",
        "  dkms trees of the bench's own (--dkmstree, --sourcetree): nothing goes to /var/lib/dkms or /usr/src")
    ko = {k: os.path.join(tree[k], DKMS_NAME, DKMS_VER, kver, platform.machine(), "module") for k in keys}
    try:
        for k in keys:
            quiet_run(dk(k, "add"), d, envs[k], "%s: dkms add" % k)
            # the fragment's first build fills its store; the second shows a fresh build directory reusing it
            for n in range(2 if k == "frag" else 1):
                quiet_run(build_argv(k), d, envs[k], "%s: dkms build (untimed, .cmd files kept)" % k)
        built = {k: glob.glob(os.path.join(ko[k], DKMS_NAME + ".ko*")) for k in keys}
        cmds = {k: {n: t.replace(build[k], "<build>") for n, t in cmd_files(kept[k]).items()} for k in keys}
        same_cmds = cmds["stock"] == cmds["frag"] and len(cmds["stock"]) > 0
        say("  modules: " + ", ".join("%s: %s" % (k, os.path.basename(built[k][0]) if built[k] else "NOT BUILT")
                                      for k in keys),
            "  command lines: %d .*.cmd files of the build directory (its path as <build>): %s"
            % (len(cmds["stock"]), "IDENTICAL" if same_cmds else "DIFFERENT: %s" % ", ".join(sorted(
                p for p in set(cmds["stock"]) | set(cmds["frag"])
                if cmds["stock"].get(p) != cmds["frag"].get(p)))[:400]))
        for k in keys:
            conf(k, False)
        subprocess.run([os.path.join(o.top, "cli", "asynccompile"), "-z"], env=envs["frag"],
                       stdout=subprocess.DEVNULL, check=True)
        vs = [Variant("stock", "stock: dkms build --force [baseline]", build_argv("stock"), cwd=d,
                      env=envs["stock"]),
              Variant("frag", "fragment through MAKE[0], cached (its default), warm store", build_argv("frag"),
                      cwd=d, env=envs["frag"])]
        _, others = timed(vs, ROUNDS, WARMUP)
        st = store_stats(o, envs["frag"])
        med, pr = paired_table(vs, vs[0])
        say(*(RATIO_NOTE % "stock").split("\n"), *background(others).split("\n"))
        runs = ROUNDS + WARMUP
        log = os.path.join(tree["frag"], DKMS_NAME, DKMS_VER, kver, platform.machine(), "log", "make.log")
        summary = []
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                summary = [line.strip() for line in f if line.startswith("asynccompile: async-shell: ")
                           and not line.startswith("asynccompile: async-shell: 0 calls")]
        say("  the fragment's %d timed and warm-up builds, from its store's counters (`asynccompile -s`):" % runs,
            "    %d from the cache, %d by speculation, %d from the memo, %d run (%.1f cached per build)"
            % (st["cache"], st.get("speculation", 0), st.get("memo", 0), st.get("misses", 0), st["cache"] / runs),
            "  the last build's make.log, ASYNC_COMPILE_DEBUG=1 (makes with calls): %s"
            % ("; ".join(summary) if summary else "none (the line counts a cached answer only when the"
               " call looked it up, not one filled at load: a make answered wholly so prints no line)"))
        hits = st["cache"] > 0
        say("  targets:",
            verdict(1 / pr["frag"] >= 1.25, "fragment, cached: dkms build --force >= 1.25x stock",
                    "paired %.2fx" % (1 / pr["frag"])),
            verdict(hits, "a fresh build directory reuses the cached answers", "cache hits %d" % st["cache"]),
            verdict(same_cmds and all(built.values()), "the .ko is built in both, every .cmd file identical",
                    "%d files" % len(cmds["stock"])))
        return hits and same_cmds and all(built.values())
    finally:
        for k in keys:
            subprocess.run(dk(k, "remove", "--all"), cwd=d, env=envs[k], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# ---------------------------------------------------------------- main

def first_line(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        return "?"


def loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


# ---------------------------------------------------------------- tracer

TRACE_PROBES = env_int("BENCH_TRACE_PROBES", 40)


def workload_tracer(o):
    """What seeing a probe costs: the probe async-shell runs most, a gcc
    compile of an empty file, plain against under the tracer (LD_PRELOAD
    and a log on descriptor 1021, as the runner gives it)."""
    n = TRACE_PROBES
    say("", "== 9. Tracer cost: %d serial `%s -c -x c /dev/null` probes, plain vs traced ==" % (n, CC))
    tracer = os.path.join(o.top, "trace", "asynccompile-trace.so")
    if not os.path.exists(tracer):
        raise BenchError("%s not built (run make)" % tracer)
    # the log as the runner makes it (lib/launch.c, lib/tracelog.h): a
    # memfd with the shared log's header, read-write on descriptor 1021;
    # every process maps it and appends without a system call
    cap = (64 << 20) - 4096
    mfd = os.memfd_create("trace-log")

    def header():
        os.ftruncate(mfd, 0)
        os.ftruncate(mfd, 4096 + cap)
        os.pwrite(mfd, b"ACTRLOG1" + struct.pack("=QQ", cap, 0), 0)

    header()
    log = os.open("/proc/self/fd/%d" % mfd, os.O_RDWR | os.O_APPEND)
    os.dup2(log, 1021)
    os.close(log)
    st = os.fstat(1021)
    def loop(k):
        return ('i=0; while [ $i -lt %d ]; do %s -c -x c /dev/null -o /dev/null || exit 1; i=$((i+1)); done'
                % (k, CC))
    argv = ["sh", "-c", loop(n)]
    # the same probes in two streams at once: what two CPUs give fork-heavy
    # work on this machine, the ceiling of every warm row (speculation runs
    # a make's probes two at a time)
    two = ["sh", "-c", "(%s) & p=$!; (%s) || exit 1; wait $p" % (loop(n // 2), loop(n - n // 2))]
    traced = dict(o.env, LD_PRELOAD=tracer, ASYNCCOMPILE_TRACE="1021:%d:%d" % (st.st_dev, st.st_ino))

    def truncate():
        header()

    vs = [Variant("plain", "plain probes [baseline]", argv, prep=truncate, env=o.env, pass_fds=(1021,)),
          Variant("traced", "traced probes", argv, prep=truncate, env=traced, pass_fds=(1021,)),
          Variant("two", "ref: plain probes, two streams at once", two, env=o.env)]
    try:
        med, others = timed(vs, ROUNDS, WARMUP)
        # the head of the last traced run (the two streams write no log): its bytes of events
        events = struct.unpack("=Q", os.pread(mfd, 8, 16))[0]
        if os.fstat(mfd).st_size != 4096 + cap:
            raise BenchError("a traced process wrote past the shared log")
    finally:
        os.close(1021)
        os.close(mfd)
    if events == 0:
        raise BenchError("the traced variant wrote no trace log: the tracer did not run")
    per = [(t - b) * 1000.0 / n for t, b in zip(vs[1].times, vs[0].times)]
    per.sort()
    extra = per[len(per) // 2]
    say(*table(["variant", "median ms", "ms/probe"],
               [[v.label, ms(med[v.key]), "%.2f" % (med[v.key] * 1000.0 / n)] for v in vs]))
    say("  tracer's own cost: %.2f ms per probe (paired median), %.3fx the plain probe; log %d bytes per probe"
        % (extra, paired_ratio(vs[1], vs[0]), events // n),
        "  two streams of the plain probe run %.2fx faster than one (paired): the most a warm row can gain"
        % (1.0 / paired_ratio(vs[2], vs[0])),
        "  here, since speculation runs a make's probes two at a time on -j2 (issue 30 asks 1.6x of Linux's)",
        *background(others).split("\n"),
        "  targets:",
        verdict(extra <= 0.25, "tracer adds at most 0.25 ms per probe (issue 30; the first-run budget: "
                "34 serial probes in a 483 ms no-op at 0.97x is 0.4 ms)", "%.2f ms" % extra))
    return True


# What bench/waits.py's workloads use of this file.
HELPERS = types.SimpleNamespace()


def helpers():
    for name in ("say", "write", "fresh_dir", "timed", "background", "ms", "MAKE", "CC", "START",
                 "ROUNDS", "WARMUP"):
        setattr(HELPERS, name, globals()[name])


def main():
    helpers()
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--busybox", default="")
    ap.add_argument("--lua", default="")
    ap.add_argument("--linux", default="")
    ap.add_argument("--linux-version", default="6.12")
    o = ap.parse_args()
    o.plugin = os.path.join(o.top, "asynccompile.so")
    o.fragment = os.path.join(o.top, "asynccompile-kbuild.mk")
    os.makedirs(o.out, exist_ok=True)
    def cfg_for(method, more=""):
        path = os.path.join(o.out, "bench-%s%s.yaml" % (method, more and "-" + more.split(":")[0]))
        write(path, "# written by bench/bench.py\nworkers: %d\nstart_method: %s\n%s" % (J, method, more))
        return path
    o.cfg_for = cfg_for
    cfg = cfg_for(START)
    # The default, `warm: true`, starts a pool at every load, also in the
    # Kbuild sub-makes that never call $(async-shell): workloads 5 and 6
    # show what that costs in a reference row.
    o.cfg_cold = cfg_for(START, "warm: false\n")
    o.cfg_cache = cfg_for(START, "cache: true\n")
    # the Kbuild fragment's "warm" rows: speculation alone (its default is cache: true)
    o.cfg_nocache = os.path.join(o.out, "bench-%s-nocache.yaml" % START)
    write(o.cfg_nocache, "# written by bench/bench.py\nworkers: %d\nstart_method: %s\ncache: false\n" % (J, START))
    o.env = bench_env(cfg)

    say("asynccompile benchmarks  %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S %z").strip(),
        "  machine: %s, nproc %s, %s" % (platform.node(), os.cpu_count(), platform.platform()),
        "  make: %s; cc: %s" % (first_line([MAKE, "--version"]), first_line([CC, "--version"])),
        "  plugin: %s; config: workers %d, start_method %s" % (o.plugin, J, START),
        "  rounds: %d timed (+%d warm-up), alternating variants; scale: %d rounds; times are medians"
        % (ROUNDS, WARMUP, SCALE_ROUNDS))

    say("  load average at start: %s" % loadavg())
    ok = True
    spent = []
    for key, fn in (("1", workload_probes), ("2", workload_overhead),
                    ("3", workload_lua), ("4", workload_scale),
                    ("5", workload_linux), ("6", workload_busybox),
                    ("7", workload_load), ("8", workload_module),
                    ("9", workload_tracer),
                    ("10", lambda o: waits.workload_stall(o, HELPERS)),
                    ("11", lambda o: waits.workload_libs(o, HELPERS)),
                    ("12", workload_dkms)):
        if key not in ONLY:
            continue
        t0 = time.monotonic()
        try:
            ok = fn(o) and ok
        except BenchError as e:
            say("  FAILED: %s" % e)
            ok = False
        spent.append("%s: %.0f s" % (key, time.monotonic() - t0))
    say("", "load average at end: %s (other work on the machine makes medians noisy)" % loadavg(),
        "time per workload (setup, builds and checks included): " + ", ".join(spent))
    write(os.path.join(o.out, "results.txt"), "\n".join(say.lines) + "\n")
    print("\nwritten to %s" % os.path.join(o.out, "results.txt"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
