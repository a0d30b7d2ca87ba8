#!/bin/sh
# test: per-start-method
# Nothing paid where unused: a make that loads the plugin and queues
# nothing starts no pool, no thread and no store (what it costs in time
# is `make bench`'s load-cost row, not a timed test).  make's threads and
# children are read from /proc by the commands make itself runs: a
# $(shell) while the makefile is read, and a recipe.
. "$(dirname "$0")/lib.sh"

FRAG=$TRASH/fragment
mkdir "$FRAG"
cp "$TEST_ROOT/asynccompile-kbuild.mk" "$FRAG/"
ln -s "$ASYNC_PLUGIN" "$FRAG/asynccompile.so"
ln -s "$TEST_ROOT/worker" "$FRAG/worker"

# make's threads, and its children other than the process asking ($$ is
# the shell make started for the command)
cat >look.sh <<'EOF2'
#!/bin/sh
m=$PPID
n=$(ls /proc/$m/task | wc -l)
kids=$(cat /proc/$m/task/*/children | tr ' ' '\n' | grep -v "^$$\$" | grep -c .)
echo "$1: threads=$n children=$kids"
EOF2
chmod +x look.sh

write_mk Makefile <<EOF2
load @PLUGIN@
\$(info \$(shell $TRASH/look.sh parse))
all: ; @$TRASH/look.sh recipe
EOF2
run_make -j2
ok "load, nothing queued: make succeeds" expect_make_ok
ok "load, nothing queued: one thread and no child while the makefile is read" \
	expect_grep '^parse: threads=1 children=0$' out
ok "load, nothing queued: one thread and no child in a recipe" \
	expect_grep '^recipe: threads=1 children=0$' out
ok "load, nothing queued: no store is created" expect_eq "" "$(ls "$XDG_CACHE_HOME" 2>/dev/null)" "store"

# The same through the fragment, in a make of a Kbuild tree that probes
# nothing (most of Kbuild's sub-makes).
mkdir -p tree/scripts
: >tree/scripts/Kbuild.include
cat >tree/Makefile <<EOF2
include scripts/Kbuild.include
\$(info \$(shell $TRASH/look.sh parse))
all: ; @$TRASH/look.sh recipe
EOF2
MAKEFILES=$FRAG/asynccompile-kbuild.mk run_make -C tree --no-print-directory -j2
ok "fragment, nothing probed: make succeeds" expect_make_ok
ok "fragment, nothing probed: one thread and no child while the makefile is read" \
	expect_grep '^parse: threads=1 children=0$' out
ok "fragment, nothing probed: one thread and no child in a recipe" \
	expect_grep '^recipe: threads=1 children=0$' out
ok "fragment, nothing probed: no store is created" expect_eq "" "$(ls "$XDG_CACHE_HOME" 2>/dev/null)" "store"

# A probe nobody speculated runs in make's own process: still no pool.
cat >tree/Makefile <<EOF2
include scripts/Kbuild.include
try-run = \$(shell if \$(1); then echo \$(2); else echo \$(3); fi)
\$(info probed: \$(call try-run,true,yes,no))
\$(info \$(shell $TRASH/look.sh parse))
all: ; @:
EOF2
MAKEFILES=$FRAG/asynccompile-kbuild.mk run_make -C tree --no-print-directory -j2
ok "fragment, first probe: make succeeds" expect_make_ok
ok "fragment, first probe: the answer" expect_grep '^probed: yes$' out
ok "fragment, first probe: it ran without a pool" \
	expect_grep '^parse: threads=1 children=0$' out

# A job does start one: the check above can see a pool.
write_mk Makefile <<EOF2
load @PLUGIN@
\$(async-try p,true)
\$(info \$(shell $TRASH/look.sh parse))
\$(async-wait)
all: ; @:
EOF2
run_make -j2
ok "a queued job: make succeeds" expect_make_ok
ok "a queued job: the I/O thread runs" expect_grep '^parse: threads=2 ' out

done_testing
