"""bench/waits.py - the recipe waits' workloads of `make bench` (issue 23),
called from bench.py with its helpers in `h`:

  7. the issue's makefile: one target's recipe queues a 3 s step and waits
     for it, six 1 s targets beside it, against the same makefile with
     `sleep 3` as the recipe line: within 1.10x (paired);
  8. 8 libraries of 20 small C files each: every library's recipe queues
     its compiles with $(async-compile), waits once, runs ar; against the
     same tree built with pattern rules: at least as fast (paired ratio
     pattern/async >= 1.00).

Both run make -jWAIT_J (BENCH_WAIT_J, default 4: the issue's -j4), with
the pool's workers following -jN (workers: auto).
"""

import os

from timer import Variant, paired_ratio, paired_spread, table, verdict

WAIT_J = int(os.environ.get("BENCH_WAIT_J", "").strip() or 4)
LIBS, FILES = 8, 20


def argv(h, mk):
    return [h.MAKE, "--no-print-directory", "-s", "-j%d" % WAIT_J, "-f", mk]


def env_for(h, o):
    path = os.path.join(o.out, "bench-waits.yaml")
    h.write(path, "# written by bench/waits.py\nworkers: auto\nstart_method: %s\n" % h.START)
    return dict(o.env, ASYNC_COMPILE_CONFIG=path)


def report(h, vs, base, others, goal, what):
    pr = paired_ratio(base, vs[1])  # base time / async time, per round
    lo, hi = paired_spread(base, vs[1])
    h.say(*table(["variant", "median ms", "min ms", "max ms"],
                 [[v.label, h.ms(v.median()), h.ms(min(v.times)), h.ms(max(v.times))] for v in vs]))
    h.say("  paired = median over rounds of the baseline's time / the async variant's time",
          *h.background(others).split("\n"))
    return pr, lo, hi


def workload_stall(o, h):
    h.say("", "== 10. A recipe waiting for a 3 s step beside six 1 s targets, -j%d ==" % WAIT_J)
    d = h.fresh_dir(os.path.join(o.out, "w7-stall"))
    rules = "all: A B1 B2 B3 B4 B5 B6\nB%: ; @sleep 1\n"
    h.write(os.path.join(d, "plain.mk"), rules + "A: ; @sleep 3\n")
    h.write(os.path.join(d, "async.mk"), "load %s\n" % o.plugin + rules +
            "A: ; @$(async-compile a,sleep 3)$(async-wait)\n")
    env = env_for(h, o)
    vs = [Variant("plain", "A: ; sleep 3 [baseline]", argv(h, "plain.mk"), cwd=d, env=env),
          Variant("async", "A: ; $(async-compile a,sleep 3)$(async-wait)", argv(h, "async.mk"),
                  cwd=d, env=env)]
    med, others = h.timed(vs, h.ROUNDS, h.WARMUP)
    pr, lo, hi = report(h, vs, vs[0], others, 1.10, "stall")
    ratio = 1 / pr  # async / plain
    h.say("  targets:",
          verdict(ratio <= 1.10, "the waiting recipe within 1.10x of the plain makefile",
                  "async/plain paired %.3f (rounds %.3f-%.3f); 5.0 s / 3.0 s before recipe waits"
                  % (ratio, 1 / hi, 1 / lo)))
    return True


def workload_libs(o, h):
    h.say("", "== 11. %d libraries x %d C files: one async-wait per library vs pattern rules, -j%d =="
          % (LIBS, FILES, WAIT_J))
    d = h.fresh_dir(os.path.join(o.out, "w8-libs"))
    for k in range(LIBS):
        os.makedirs(os.path.join(d, "l%d" % k))
        for i in range(FILES):
            h.write(os.path.join(d, "l%d" % k, "f%d.c" % i),
                    "#include <string.h>\nint l%d_f%d(const char *s)\n{\n"
                    "\tint n = 0;\n\tfor (size_t i = 0; i < strlen(s); i++)\n"
                    "\t\tn = n * 31 + s[i] + %d;\n\treturn n;\n}\n" % (k, i, i))
    head = ("CC := %s\nCFLAGS := -O2 -Wall\nLIBS := $(foreach k,%s,l$k/lib.a)\n"
            "OBJS = $(patsubst %%.c,%%.o,$(wildcard $(dir $@)*.c))\nall: $(LIBS)\n"
            % (h.CC, " ".join(str(k) for k in range(LIBS))))
    h.write(os.path.join(d, "pattern.mk"), head +
            ".SECONDEXPANSION:\n$(LIBS): $$(patsubst %.c,%.o,$$(wildcard $$(dir $$@)*.c))\n"
            "\t$(AR) rcs $@ $^\n%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n")
    h.write(os.path.join(d, "async.mk"), "load %s\n" % o.plugin + head +
            "$(LIBS):\n\t$(foreach o,$(OBJS),$(async-compile $o,$(CC) $(CFLAGS) -c $(o:.o=.c) -o $o))"
            "$(async-wait)\n\t$(AR) rcs $@ $(OBJS)\n")

    def prep():
        for k in range(LIBS):
            for f in os.listdir(os.path.join(d, "l%d" % k)):
                if f.endswith(".o") or f.endswith(".a"):
                    os.unlink(os.path.join(d, "l%d" % k, f))

    env = env_for(h, o)
    vs = [Variant("pattern", "pattern rules + ar [baseline]", argv(h, "pattern.mk"), prep, d, env=env),
          Variant("async", "async-compile x20 + one async-wait + ar, per library",
                  argv(h, "async.mk"), prep, d, env=env)]
    med, others = h.timed(vs, h.ROUNDS, h.WARMUP)
    pr, lo, hi = report(h, vs, vs[0], others, 1.00, "libs")
    built = all(os.path.exists(os.path.join(d, "l%d" % k, "lib.a")) for k in range(LIBS))
    h.say("  targets:",
          verdict(pr >= 1.00, "the async tree at least as fast as pattern rules",
                  "pattern/async paired %.3f (rounds %.3f-%.3f)" % (pr, lo, hi)),
          verdict(built, "every library was built", "%d lib.a" % LIBS))
    return built
