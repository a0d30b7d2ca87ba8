#!/bin/sh
# Big output on both streams while stdin is still being fed: the runner
# must poll all three pipes (a naive read-stdout-then-stderr deadlocks).
. "$(dirname "$0")/lib.sh"
pool_init

t_bigio() {
	"$CLIENT" "$WORKER" 2 bigio 10 >res 2>log || { cat res log; return 1; }
	expect_grep '^status=0 flags=none out_bytes=10485760 err_bytes=10485760$' res
}
ok '10 MiB stdin echoed on stdout while 10 MiB go to stderr, byte-exact' t_bigio
[ -f log ] && diag "10MB test wall time: $(sed -n 's/^wall_ms: //p' log) ms"

t_bigio_twice() {
	# Both workers at once, so two jobs' pipes interleave in the pool.
	"$CLIENT" "$WORKER" 2 bigio 10 >res1 2>&1 & p1=$!
	"$CLIENT" "$WORKER" 2 bigio 10 >res2 2>&1 || { cat res2; return 1; }
	wait $p1 || { cat res1; return 1; }
}
ok 'two 10 MiB jobs in two pools at once' t_bigio_twice

done_testing
