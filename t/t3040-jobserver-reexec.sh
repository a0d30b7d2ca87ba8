#!/bin/sh
# make re-executes itself after remaking a makefile.  A sub-make does so
# with no hook a plugin could use, while parse-time jobs still hold
# jobserver tokens: the plugin in the new image must give them back.
. "$(dirname "$0")/lib.sh"

write_config "workers: 4"

# Five jobs, four slots (the implicit one and three tokens).  p2 ends at
# once, so its token goes back and p5 takes one: the record must follow
# both.  The other four outlive the parse (in the first image they sleep
# until killed) and hold every token there is.  gen.mk's recipe waits
# until those four have started, then make remakes it and re-executes
# itself; the new image queues the jobs again, short this time.  The
# wait is bounded by the clock, not by a count of rounds: at a load of
# 12 on 2 CPUs, 200 rounds of ls|wc and sleep outlasted the 60 s the
# whole make is given.
reexec_mk() {
	cat <<EOF
all:
load $ASYNC_PLUGIN
\$(foreach i,1 2 3 4 5,\$(async-try p\$i,\$(if \$(filter 2,\$i),,touch started.\$i; sleep \$(if \$(MAKE_RESTARTS),0.1,$M);) echo p\$i))
include gen.mk
gen.mk:
	@end=\$\$((\$\$(date +%s) + 10)); while [ \$\$(ls started.* 2>/dev/null | wc -l) -lt 4 ] && [ \$\$(date +%s) -lt \$\$end ]; do sleep 0.05; done
	@echo 'X := 1' >\$@
all: ; @echo done X=\$(X) \$(async-wait)\$(foreach i,1 2 3 4 5,\$(p\$i.out)) restarts=\$(MAKE_RESTARTS)
EOF
}
M=1240.$$ # unique to this run, for none_left
reexec_mk >Makefile

for style in pipe fifo; do
	if [ "$style" = fifo ] && [ "$(make_version)" = 4.3 ]; then
		skip "fifo jobserver: make $(make_version) only speaks pipes"
		skip "fifo jobserver: make $(make_version) only speaks pipes"
		skip "fifo jobserver: make $(make_version) only speaks pipes"
		continue
	fi
	rm -f gen.mk started.*
	timeout -k 5 60 "$TEST_HELPERDIR/jsbox.py" "$style" abc -- "$MAKE_UT" >out 2>err; rc=$?
	ok "$style jobserver: the re-executed make runs the jobs again" \
		sh -c '[ "$0" -eq 0 ] && grep -qx "done X=1 p1 p2 p3 p4 p5 restarts=1" out || { cat out err; exit 1; }' "$rc"
	ok "$style jobserver: tokens held at the re-exec come back" \
		sh -c 'tail -n1 out | grep -qx "tokens:abc" || { cat out err; exit 1; }'
	ok "$style jobserver: no job of the first image is left" none_left "$M"
done

# The same through a real top-level make: it counts its tokens at exit.
mkdir -p sub
reexec_mk >sub/Makefile
printf 'all: ; +@$(MAKE) -s -C sub\n' >Makefile
rm -f sub/gen.mk sub/started.*
run_make -j4
ok "a sub-make's re-exec: the top-level make finds all its tokens" expect_make_ok
ok "a sub-make's re-exec: the sub-make's jobs ran" expect_grep '^done X=1 p1 p2 p3 p4 p5 restarts=1$' out

# The plugin itself is a target that make remakes: make unloads the old
# copy (its exit handler ends the jobs and gives their tokens back) and
# re-executes itself.  Nothing of the old copy may be left in use: the
# record lives in make's environment, which the exec passes on.
mkdir -p so && cd so || exit 1
cp "$ASYNC_PLUGIN" ac.so
touch -d '1 hour ago' ac.so
touch stamp
cat >Makefile <<EOF
all:
load ./ac.so(asynccompile_gmk_setup)
ac.so: stamp ; @cp '$ASYNC_PLUGIN' \$@
\$(foreach i,1 2 3,\$(async-try p\$i,echo p\$i))
all: ; @echo \$(async-wait)\$(p1.out) \$(p2.out) \$(p3.out) restarts=\$(MAKE_RESTARTS)
EOF
[ -n "${ASYNC_COMPILE_WORKER:-}" ] || ASYNC_COMPILE_WORKER=$TEST_ROOT/worker/asynccompile-worker
export ASYNC_COMPILE_WORKER
timeout -k 5 60 "$TEST_HELPERDIR/jsbox.py" pipe abc -- "$MAKE_UT" >out 2>err; rc=$?
ok "a remade plugin: make re-executes and the jobs run again" \
	sh -c '[ "$0" -eq 0 ] && grep -qx "p1 p2 p3 restarts=1" out || { cat out err; exit 1; }' "$rc"
ok "a remade plugin: the tokens come back" \
	sh -c 'tail -n1 out | grep -qx "tokens:abc" || { cat out err; exit 1; }'
cd .. || exit 1

# The record is honoured only by the very process that wrote it: same pid
# and start time (exec keeps both).  A shell under the jobserver writes a
# record of one token 'a', then execs make (which remakes nothing).
printf 'load %s\n$(async-try x,true)$(async-wait)\nall: ; @:\n' "$ASYNC_PLUGIN" >Makefile
record() { # PID-OFFSET START-OFFSET: the record names the shell's pid and start time plus these
	timeout -k 5 60 "$TEST_HELPERDIR/jsbox.py" pipe bc -- sh -c '
		st=$(sed "s/.*) //" /proc/$$/stat | cut -d" " -f20)
		ASYNCCOMPILE_HELD_TOKENS=$(($$ + $0)).$((st + $1)):61 exec "$2"' \
		"$1" "$2" "$MAKE_UT" >out 2>err
}
record 0 0; rc=$?
ok "a record of this very process gives its token back" \
	sh -c '[ "$0" -eq 0 ] && tail -n1 out | grep -qx "tokens:abc" || { cat out err; exit 1; }' "$rc"
record 0 1; rc=$?
ok "a record with another start time (a reused pid) gives nothing" \
	sh -c '[ "$0" -eq 0 ] && tail -n1 out | grep -qx "tokens:bc" || { cat out err; exit 1; }' "$rc"
record 1 0; rc=$?
ok "a record of another pid (a parent's, inherited) gives nothing" \
	sh -c '[ "$0" -eq 0 ] && tail -n1 out | grep -qx "tokens:bc" || { cat out err; exit 1; }' "$rc"

done_testing
