#!/bin/sh
# test: per-start-method
# A sub-make that loads the plugin dies of a signal while its jobs hold
# jobserver tokens.  make's handler kills the process with the signal
# again, no exit handler runs: the plugin's own handler, in front of
# make's, must give the tokens back (`timeout 2 $(MAKE) ...` left the
# top-level make with "INTERNAL: Exiting with 5 jobserver tokens
# available; should be 8!").
. "$(dirname "$0")/lib.sh"
M=$$


# Six jobs, four workers: the implicit slot and three tokens in use.
# make.pid: the make process (the parent of $(shell)'s shell).
write_config "workers: 4"
write_mk sub.mk <<'EOF2'
load @PLUGIN@
$(shell echo $$PPID >make.pid)
all:
	$(foreach i,1 2 3 4 5 6,$(async-compile j$i,sleep $(MK)))
	$(async-wait)
EOF2

n=0
for style in pipe fifo; do
	for sig in TERM INT HUP QUIT; do
		n=$((n + 1))
		if [ "$style" = fifo ] && [ "$(make_version)" = 4.3 ]; then
			skip "fifo jobserver: make $(make_version) only speaks pipes"
			skip "fifo jobserver: make $(make_version) only speaks pipes"
			continue
		fi
		mk=1245$n.$M
		rm -f make.pid
		timeout -k 5 60 "$TEST_HELPERDIR/jsbox.py" "$style" abcdef -- \
			"$MAKE_UT" -f sub.mk MK="$mk" >out 2>err &
		box=$!
		if wait_until running "$mk" 4 && [ -s make.pid ]; then
			kill -s "$sig" "$(cat make.pid)"
		else
			echo "# the jobs did not start"; kill "$box"; rm -f out
		fi
		wait "$box"
		ok "$style jobserver, SIG$sig to the sub-make: every token comes back" \
			sh -c 'tail -n1 out | grep -qx "tokens:abcdef" || { cat out err; exit 1; }'
		ok "$style jobserver, SIG$sig to the sub-make: no job is left" none_left "$mk"
	done
done

# The report's case: a real top-level make -j8 counts its tokens at exit.
printf 'all:\n\t+$(MAKE) -f sub.mk\n' >Makefile
for sig in TERM HUP; do
	n=$((n + 1))
	mk=1245$n.$M
	rm -f make.pid
	timeout -k 5 60 "$MAKE_UT" -j8 MK="$mk" >out 2>err &
	top=$!
	if wait_until running "$mk" 4 && [ -s make.pid ]; then
		kill -s "$sig" "$(cat make.pid)"
	else
		echo "# the jobs did not start"; kill "$top"; echo "(the jobs did not start)" >err
	fi
	wait "$top"; rc=$?
	ok "SIG$sig to a sub-make: the top-level make finds all its tokens" \
		sh -c '[ "$0" -eq 2 ] && ! grep -q INTERNAL err || { echo "rc=$0"; cat err; exit 1; }' "$rc"
	ok "SIG$sig to a sub-make: no job is left" none_left "$mk"
done

done_testing
