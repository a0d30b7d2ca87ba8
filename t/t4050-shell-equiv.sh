#!/bin/sh
# async-shell against $(shell): the same result text, the same
# .SHELLSTATUS and the same stderr, command by command, over a corpus of
# awkward commands (asynccompile(7), "DROP-IN PROBES").
. "$(dirname "$0")/lib.sh"

# Each case: a makefile fragment that sets CMD, one per line, as a makefile
# author writes it.  NAME<TAB>make text of the command.
cat >corpus <<'EOF2'
simple	echo hello world
noshell-missing	asynccompile-no-such-command-xyz
shell-missing	asynccompile-no-such-command-xyz; true
exit0	exit 0
exit1	echo out; exit 1
exit127-out	echo said this; exit 127
signal	kill -TERM $$$$
crlf	printf 'a\r\nb\r\n\r\n'
empty	true
newlines	printf '\n\na\n\n\nb\n\n'
blanks	printf '  lead\ttab  '
mb	head -c 1048576 /dev/zero | tr '\0' x
nul	printf 'x\0y\n'
stderr-only	echo to stderr >&2
both	echo out; echo err >&2; exit 3
comma	echo a,b,,c
dollar	echo "$$HOME" '$$x' '\#'
quotes	echo "a   b"  'c   d'
cd	cd / && pwd
stdin	cat
glob	echo /dev/nul?
EOF2

# FILE: the command, the variables to compare (result text, status), and a
# marker between the two calls so their stderr can be split.
case_mk() { # function cmd
	cat <<EOF2
load $ASYNC_PLUGIN
R := \$($1 $2)
S := \$(.SHELLSTATUS)
\$(file >res,[\$(R)])
\$(file >>res,status=\$(S))
all: ; @:
EOF2
}

tab=$(printf '\t')
while IFS=$tab read -r name cmd; do
	case_mk shell "$cmd" >Makefile.shell
	case_mk async-shell "$cmd" >Makefile.async
	rm -f res
	run_make -f Makefile.shell </dev/null
	st_shell=$make_status
	mv res res.shell 2>/dev/null
	sed "s/^make\(\[[0-9]*\]\)\{0,1\}: //" err >err.shell
	run_make -f Makefile.async </dev/null
	st_async=$make_status
	mv res res.async 2>/dev/null
	# what make itself says about a command it could not run carries its
	# own prefix; the job's stderr is compared without it
	sed "s/^make\(\[[0-9]*\]\)\{0,1\}: //" err >err.async
	ok "$name: same result and .SHELLSTATUS" \
		expect_eq "$(cat res.shell; echo "make=$st_shell")" "$(cat res.async; echo "make=$st_async")"
	case $name in
	noshell-missing)
		# make execs a command without shell syntax itself; the pool
		# runs it through the shell: both name the command
		ok "$name: stderr names the command" \
			sh -c 'grep -q asynccompile-no-such-command-xyz err.shell &&
			       grep -q asynccompile-no-such-command-xyz err.async' ;;
	*)
		ok "$name: same stderr" expect_eq "$(cat err.shell)" "$(cat err.async)" ;;
	esac
done <corpus

# A shell that cannot be started: the same status and empty result, and
# an error that names the shell.
for fn in shell async-shell; do
	{
		echo "load $ASYNC_PLUGIN"
		echo "SHELL := $TRASH/no-such-shell"
		echo "R := \$($fn echo hi)"
		echo "\$(file >res.$fn,[\$(R)] status=\$(.SHELLSTATUS))"
		echo "all: ; @:"
	} >Makefile.$fn
	run_make -f Makefile.$fn
	cp err err.$fn
done
ok "missing SHELL: same result and .SHELLSTATUS" expect_eq "$(cat res.shell)" "$(cat res.async-shell)"
ok "missing SHELL: the error names the shell" expect_grep "no-such-shell" err.async-shell

# SHELL and .SHELLFLAGS are honoured as make has them when called.
write_mk Makefile <<'EOF2'
load @PLUGIN@
SHELL := /bin/bash
.SHELLFLAGS := -ec
A := $(shell echo $$BASH_VERSION; false; echo not reached)
B := $(async-shell echo $$BASH_VERSION; false; echo not reached)
$(file >res,[$(A)]=[$(B)])
all: ; @:
EOF2
run_make
ok "SHELL and .SHELLFLAGS as make has them" \
	sh -c 'r=$(cat res); case $r in "[]=[]"|*"not reached"*) echo "$r"; exit 1;; esac
	       [ "${r%%=*}" = "${r#*=}" ] || { echo "$r"; exit 1; }'

# A command the makefile spells with $(comma) and one with a literal comma
# past the first argument: async-shell takes one argument, like $(shell).
write_mk Makefile <<'EOF2'
load @PLUGIN@
comma := ,
$(file >res,[$(async-shell echo a$(comma)b, c)]=[$(shell echo a$(comma)b, c)])
all: ; @:
EOF2
run_make
ok "commas fold into the command as for \$(shell)" expect_eq "[a,b, c]=[a,b, c]" "$(cat res)"

done_testing
