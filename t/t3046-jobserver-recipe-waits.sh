#!/bin/sh
# test: per-start-method
# Recipes waiting at once never deadlock and never run more than -jN
# steps: each collector line lends its slot to the steps it waits for.
# Signals to make while collectors wait leave no process and lose no
# token, and a collector whose make died exits at once.
. "$(dirname "$0")/lib.sh"
M=$$

write_config "workers: 4"

# targets N STEPS SECONDS: a makefile of N targets, each queuing STEPS
# logged build steps and waiting for them on a line of its own.
tokens_back() { # jsbox's last line holds two tokens again
	tail -n1 out | grep -qx "tokens:.." || { cat out err; return 1; }
}
targets() { # n steps seconds
	{
		echo "load $ASYNC_PLUGIN"
		printf 'all:'; i=1; while [ $i -le "$1" ]; do printf ' t%d' $i; i=$((i + 1)); done; echo
		echo 't%:'
		printf '\t@$(foreach i,%s,$(async-compile $@.$i,%s))\n' "$(seq -s ' ' 1 "$2")" \
			"$(span_cmd "$TRASH/log" '$@.$i' "$3")"
		printf '\t@$(async-wait)\n'
		printf '\t@echo $@ done\n'
	} >Makefile
}

targets 3 2 0.05
for j in "" -j1; do
	rm -f log; run_make $j
	ok "make ${j:-without -j}: three recipes wait in turn, make exits 0" expect_make_ok
	ok "make ${j:-without -j}: every step ran" expect_eq 6 "$(grep -c ' +1 ' log)" "steps"
	ok "make ${j:-without -j}: one step at a time" expect_overlap_le 1 log
done

# Four recipes wait at once under -j2: every slot is held by a collector,
# yet their steps run (on those slots), never more than two at once.
targets 4 3 0.1
styles=pipe
[ "$(make_version)" = 4.3 ] || styles="pipe fifo"
for st in $styles; do
	flag=
	[ "$(make_version)" = 4.3 ] || flag=--jobserver-style=$st
	rm -f log; run_make -j2 $flag
	ok "-j2, $st jobserver, four recipes waiting at once: make exits 0" expect_make_ok
	ok "-j2, $st jobserver: every step ran" expect_eq 12 "$(grep -c ' +1 ' log)" "steps"
	ok "-j2, $st jobserver: at most two steps at once" expect_overlap_le 2 log
done
[ "$styles" = pipe ] && skip "fifo jobserver: make $(make_version) only speaks pipes" &&
	skip "fifo jobserver" && skip "fifo jobserver"

# A sub-make of a jobserver we own: as many tokens come back, in both
# styles (make 4.3 writes back '+' for a token its own lines took).
mv Makefile sub.mk
for st in $styles; do
	rm -f log
	timeout -k 5 60 "$TEST_HELPERDIR/jsbox.py" "$st" ab -- "$MAKE_UT" -f sub.mk >out 2>err
	ok "sub-make of a $st jobserver (3 slots): every token comes back" tokens_back
	ok "sub-make of a $st jobserver: at most three steps at once" expect_overlap_le 3 log
done
[ "$styles" = pipe ] && skip "fifo jobserver: make $(make_version) only speaks pipes" &&
	skip "fifo jobserver"

# Recursion: the top-level make's own waiting recipes beside a sub-make's.
sed 's/^all:/sub:/' sub.mk >sub2.mk
{
	echo "load $ASYNC_PLUGIN"
	echo 'all: s u1 u2'
	echo 's: ; +@$(MAKE) -s -f sub2.mk sub'
	echo 'u%:'
	printf '\t@$(foreach i,1 2,$(async-compile $@.$i,%s))\n' "$(span_cmd "$TRASH/log" '$@.$i' 0.1)"
	printf '\t@$(async-wait)\n'
} >Makefile
rm -f log; run_make -j2
ok "recursive make, -j2: make exits 0" expect_make_ok
ok "recursive make: every step ran" expect_eq 16 "$(grep -c ' +1 ' log)" "steps"
ok "recursive make: at most two steps at once" expect_overlap_le 2 log

# Signals.  Recipes wait on steps that sleep; make.pid is make.  In
# sig1.mk one recipe waits: its line holds make's implicit slot and no
# token, so every token the sub-make's jobserver misses would be the
# plugin's (make 4.4.1 itself keeps the tokens of lines it kills).
write_mk sig.mk <<'EOF2'
load @PLUGIN@
$(shell echo $$PPID >make.pid)
all: a b
a b: ; @$(async-compile $@1,sleep $(MK))$(async-compile $@2,sleep $(MK))$(async-wait)
EOF2
write_mk sig1.mk <<'EOF2'
load @PLUGIN@
$(shell echo $$PPID >make.pid)
a: ; @$(foreach i,1 2 3,$(async-compile $@$i,sleep $(MK)))$(async-wait)
EOF2
# (the collector itself, not the shell running its line)
collectors() { # count: exactly that many collectors of this test run
	[ "$(pgrep -f -- "^[^ ]*asynccompile-worker --collect $TMPDIR/" | wc -l)" -eq "$1" ]
}
some() { # marker: a collector waits and two steps sleep
	[ "$(pgrep -f -- "^[^ ]*asynccompile-worker --collect $TMPDIR/" | wc -l)" -ge 1 ] &&
	[ "$(pgrep -f -x "sleep $1" | wc -l)" -ge 2 ]
}
started() { # marker
	wait_until some "$1" && [ -s make.pid ]
}

n=0
for sig in INT TERM; do
	for st in pipe fifo; do
		n=$((n + 1)); mk=1246$n.$M; rm -f make.pid
		if [ "$styles" = pipe ] && [ $st = fifo ]; then
			skip "fifo jobserver: make $(make_version) only speaks pipes"
			skip "fifo jobserver"; skip "fifo jobserver"
			continue
		fi
		timeout -k 5 60 "$TEST_HELPERDIR/jsbox.py" "$st" ab -- \
			"$MAKE_UT" -f sig1.mk MK="$mk" >out 2>err &
		box=$!
		if wait_until running "$mk" 3 && wait_until collectors 1 && [ -s make.pid ]; then
			kill -s "$sig" "$(cat make.pid)"
		else
			echo "# did not start"
		fi
		wait "$box"
		ok "SIG$sig to a sub-make ($st) while a collector waits: the very tokens come back" \
			sh -c 'tail -n1 out | grep -qx "tokens:ab" || { cat out err; exit 1; }'
		ok "SIG$sig ($st): no step left" none_left "$mk"
		ok "SIG$sig ($st): no collector left" wait_until collectors 0
	done
done

# The whole group, as Ctrl-C and a CI's kill do: make is its group's leader.
for sig in INT TERM KILL; do
	n=$((n + 1)); mk=1246$n.$M; rm -f make.pid
	setsid timeout -s KILL 60 "$MAKE_UT" -j3 -f sig.mk MK="$mk" >out 2>err &
	if started "$mk"; then
		kill -s "$sig" -- "-$(ps -o pgid= -p "$(cat make.pid)" | tr -d ' ')"
	else
		echo "# did not start"
	fi
	wait
	ok "SIG$sig to make's group: no step left" none_left "$mk"
	ok "SIG$sig to make's group: no collector left" wait_until collectors 0
	ok "SIG$sig to make's group: no INTERNAL token message" expect_no_grep INTERNAL err
done

# make alone SIGKILLed: its collectors see the socket end and exit.
n=$((n + 1)); mk=1246$n.$M; rm -f make.pid
timeout -s KILL 60 "$MAKE_UT" -j3 -f sig.mk MK="$mk" >out 2>err &
if started "$mk"; then kill -KILL "$(cat make.pid)"; else echo "# did not start"; fi
wait
ok "make SIGKILLed: its collectors exit" wait_until collectors 0
ok "make SIGKILLed: each says its make is gone" \
	expect_grep 'make that queued wait [0-9]* exited before its steps ended' err
ok "make SIGKILLed: no step left" none_left "$mk"

done_testing
