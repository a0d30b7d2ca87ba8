#!/bin/sh
# Process state, clocks, pids and randomness (issue 29, items 2 and 7):
# async-shell gives $(shell)'s answer or does not reuse one.  As in
# t4062, the same makefiles run in two directories, "sh" with $(shell)
# and "as" with $(async-shell) (memo, speculation and the cache), and
# their answers are compared.  The make of each run starts from the
# state the case sets (a wrapper script in place of the make under test).
. "$(dirname "$0")/lib.sh"

PROBE=$TEST_HELPERDIR/trace-probe
case $PROBE in /*) ;; *) PROBE=$TEST_CWD/$PROBE ;; esac
[ -x "$PROBE" ] || skip_all "no $PROBE (run make test-build)"

mkdir sh as
variant_mk() { # file: stdin with FN replaced, into both directories
	tl_text=$(cat)
	printf '%s\n' "$tl_text" | sed 's/FN/shell/g' | write_mk "sh/$1"
	printf '%s\n' "$tl_text" | sed 's/FN/async-shell/g' | write_mk "as/$1"
}
for d in sh as; do
	{ [ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"
	  echo "cache: true"; } >$d/c.yaml
done
PLAIN_MAKE=$MAKE_UT
# run_both [STATE [RUNNER]]: make in each directory, started after the
# shell command STATE (umask 077, ulimit -Sn 512...) through RUNNER (nice
# -n 5...); outputs in sh.out/as.out.
run_both() {
	printf '#!/bin/sh\n%s\nexec %s "%s" "$@"\n' "${1:-:}" "${2:-}" "$PLAIN_MAKE" >state-make
	chmod +x state-make
	for d in sh as; do
		(cd $d && MAKE_UT=$TRASH/state-make run_make; echo "$make_status" >.status)
		cp $d/out $d.out; cp $d/err $d.err
	done
}
same_answers() {
	expect_eq "$(cat sh/.status)" "$(cat as/.status)" "make's status (\$(shell) vs async-shell)" &&
	expect_eq "$(grep -v '^make' sh.out)" "$(grep -v '^make' as.out)" "output (\$(shell) vs async-shell)"
}

# -- item 2: the state a command starts with
variant_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
$(info umask=$(FN umask))
$(info nofile=$(FN ulimit -n))
$(info stack=$(FN ulimit -s; getconf ARG_MAX))
$(info nice=$(FN nice))
$(info groups=$(FN id -G))
$(info nproc=$(FN nproc))
all: ; @:
EOF2
run_both
run_both
ok "warm (recorded, cached): the same as \$(shell)" same_answers
stack=$(ulimit -s)
case $stack in
[0-9]*) stack=$((stack / 2)) ;;
*) stack=4096 ;;
esac
nofile=$(ulimit -n)
case $nofile in
[0-9]*) [ "$nofile" -gt 512 ] && nofile=512 || nofile=$((nofile - 1)) ;;
*) nofile=512 ;;
esac
for state in "umask 077" "ulimit -Sn $nofile" "ulimit -Ss $stack" "nice -n 5"; do
	case $state in
	nice*) run_both : "$state" ;;
	*) run_both "$state" ;;
	esac
	ok "started after '$state': \$(shell)'s answers" same_answers
	case $state in
	umask*) ok "umask 077: the new umask" expect_grep '^umask=0077$' as.out ;;
	nice*) ok "nice -n 5: the new nice value" expect_grep "^nice=$(nice -n 5 nice)\$" as.out ;;
	"ulimit -Sn"*) ok "$state: the new limit" expect_grep "^nofile=$nofile\$" as.out ;;
	esac
	run_both
	ok "and after it, as before: \$(shell)'s answers" same_answers
done
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	skip "groups: setpriv --groups needs root and setpriv (util-linux)"
else
	run_both : "setpriv --groups 4242,4243"
	ok "setpriv --groups: \$(shell)'s groups" same_answers
	ok "setpriv --groups: the groups given" \
		expect_grep "^groups=$(setpriv --groups 4242,4243 id -G)\$" as.out
	run_both
	ok "and after it, as before" same_answers
fi
if ! command -v taskset >/dev/null 2>&1 || [ "$(nproc)" -lt 2 ]; then
	skip "taskset -c 0: needs taskset (util-linux) and two CPUs to run on"
else
	run_both : "taskset -c 0"
	ok "taskset -c 0: \$(shell)'s nproc" same_answers
	ok "taskset -c 0: nproc is 1" expect_grep '^nproc=1$' as.out
	run_both
	ok "and after it, as before" same_answers
fi
run_both "umask 077"
(cd as && ASYNC_COMPILE_DEBUG=2 run_make)
ok "ASYNC_COMPILE_DEBUG says which part of the state differed" \
	expect_grep 'process state changed: umask 0022, was 0077' as/err
rm -rf sh/* as/*

# -- item 7: clocks, pids and randomness: two calls give two answers
for d in sh as; do
	{ [ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"
	  echo "cache: true"; } >$d/c.yaml
done
variant_mk Makefile <<EOF2
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
two = \$(if \$(filter-out \$(1),\$(2)),two answers,one answer)
pid1 := \$(FN echo \$\$\$\$)
pid2 := \$(FN echo \$\$\$\$)
\$(info pid: \$(call two,\$(pid1),\$(pid2)))
tmp1 := \$(FN mktemp -u)
tmp2 := \$(FN mktemp -u)
\$(info mktemp-u: \$(call two,\$(tmp1),\$(tmp2)))
rnd1 := \$(FN bash -c 'echo \$\$RANDOM\$\$RANDOM')
rnd2 := \$(FN bash -c 'echo \$\$RANDOM\$\$RANDOM')
\$(info RANDOM: \$(call two,\$(rnd1),\$(rnd2)))
urnd1 := \$(FN od -An -tx1 -N8 /dev/urandom)
urnd2 := \$(FN od -An -tx1 -N8 /dev/urandom)
\$(info urandom: \$(call two,\$(urnd1),\$(urnd2)))
mono1 := \$(FN $PROBE monotonic)
mono2 := \$(FN $PROBE monotonic)
\$(info monotonic: \$(call two,\$(mono1),\$(mono2)))
boot1 := \$(FN $PROBE boottime)
boot2 := \$(FN $PROBE boottime)
\$(info boottime: \$(call two,\$(boot1),\$(boot2)))
\$(file >>runs.txt,\$(pid1) \$(tmp1) \$(mono1) \$(boot1))
all: ; @:
EOF2
command -v bash >/dev/null 2>&1 || sed -i '/RANDOM/d' sh/Makefile as/Makefile
kinds="pid mktemp-u urandom monotonic boottime"
command -v bash >/dev/null 2>&1 && kinds="$kinds RANDOM"
for run in 1 2 3; do
	run_both
	ok "run $run: two calls, two answers, as \$(shell) gives" same_answers
	for k in $kinds; do
		ok "run $run: $k: two calls, two answers" expect_grep "^$k: two answers\$" as.out
	done
done
ok "and every run's answers its own (speculation, the cache)" \
	sh -c '[ "$(sort -u as/runs.txt | wc -l)" = 3 ]'

rm -rf sh/* as/*

# The runner's own events come before the command's in the log: a program
# run directly (no shell) that appears earlier on PATH is seen
variant_mk Makefile <<'EOF2'
ASYNC_COMPILE_CONFIG := c.yaml
load @PLUGIN@
$(info tool=$(FN tool))
all: ; @:
EOF2
for d in sh as; do
	{ [ -n "${TEST_START_METHOD:-}" ] && echo "start_method: $TEST_START_METHOD"
	  echo "cache: true"; } >$d/c.yaml
	mkdir $d/early $d/bin
	printf '#!/bin/sh\necho late\n' >$d/bin/tool
	chmod +x $d/bin/tool
done
onpath='PATH=$PWD/early:$PWD/bin:$PATH; export PATH'
run_both "$onpath"
run_both "$onpath"
for d in sh as; do cp $d/bin/tool $d/early/tool; sed -i 's/late/early/' $d/early/tool; done
run_both "$onpath"
ok "a direct command's program, new earlier on PATH: its answer" expect_grep '^tool=early$' as.out
ok "the same as \$(shell)" same_answers

done_testing
