#!/bin/sh
# t/makes-under-test.sh - TAP: which makes the suite runs under (TEST_MAKES,
# from t/Makefile).  Both GNU Make 4.3 and 4.4.1 are meant to be; one
# that is missing is a skipped test saying how to get it, not a silent gap.
n=0
for want in 4.3 4.4.1; do
	n=$((n + 1))
	found=
	for m in ${TEST_MAKES:-make}; do
		case $("$m" --version 2>/dev/null | head -n 1) in
		"GNU Make $want") found=$m ;;
		esac
	done
	if [ -n "$found" ]; then
		echo "ok $n - GNU Make $want is under test: $found"
	elif [ "$want" = 4.4.1 ]; then
		echo "ok $n # skip GNU Make 4.4.1 not built: bash .ci/build-make44.sh builds it in build/make-4.4.1"
	else
		echo "ok $n # skip GNU Make $want not on PATH (Debian bookworm's make is 4.3)"
	fi
done
echo "1..$n"
