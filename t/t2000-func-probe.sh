#!/bin/sh
# test: per-start-method
# async-try: results as variables, $(shell) compatibility, argument errors.
. "$(dirname "$0")/lib.sh"

write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try p1,printf 'a\nb\n\n')
$(async-try p2,printf 'a\r\nb')
$(async-try p3,printf '  lead\ttab \n')
$(async-try p4,printf 'x\0y')
$(async-try p5,echo out; echo err >&2; exit 3)
$(async-try p6,echo "$$HOME" '\#' '$$x')
$(async-try p7,cat,hello input)
$(async-try p8,cat,extra,commas,fold into the input)
$(async-wait)
s1 := $(shell printf 'a\nb\n\n')
s2 := $(shell printf 'a\r\nb')
s3 := $(shell printf '  lead\ttab \n')
s4 := $(shell printf 'x\0y')
s5 := $(shell echo out; exit 3)
st5 := $(.SHELLSTATUS)
s6 := $(shell echo "$$HOME" '\#' '$$x')
$(file >result,$(foreach i,1 2 3 4 6,[$(p$i.out)]=[$(s$i)])|$(p5.status)=$(st5)|$(p5.out)=$(s5)|$(p5.err)|$(p7.out)|$(p8.out))
all: ; @:
EOF2
run_make
ok "make runs probes at parse time" expect_make_ok
ok "NAME.out folds output exactly like \$(shell)" \
	expect_eq "[a b]=[a b] [a b]=[a b] [  lead	tab ]=[  lead	tab ] [x]=[x] [$HOME \\# \$x]=[$HOME \\# \$x]|3=3|out=out|err|hello input|extra,commas,fold into the input" "$(cat result 2>&1)"

write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try ok,true)
$(async-try bad,exit 7)
$(async-wait ok bad)
$(info ok=$(ok.status) bad=$(bad.status))
all: ; @:
EOF2
run_make
ok "a failing probe never stops make" expect_make_ok
ok "probe status is data" expect_grep '^ok=0 bad=7$' out

write_mk Makefile <<'EOF2'
-load @PLUGIN@
$(async-try a,echo one)
$(async-try b,echo two)
$(async-wait a)
$(info a=$(a.out) b=$(flavor b.out))
$(async-wait b)
$(info b=$(b.out))
all: ; @:
EOF2
run_make
ok "-load works and waiting by name collects only that job" expect_grep '^a=one b=recursive$' out
ok "the other job is collected by a later wait" expect_grep '^b=two$' out

err_case() { # description make-text expected-message
	printf 'load %s\n%s\nall: ; @:\n' "$ASYNC_PLUGIN" "$2" >Makefile
	run_make
	ok "$1" sh -c '[ "$0" -eq 2 ] && grep -q -e "$1" err || { cat err; exit 1; }' "$make_status" "$3"
}
err_case "duplicate NAME is an error" '$(async-try x,true)$(async-try x,true)' \
	"Makefile:2: \*\*\* async-try: a job named 'x' is already queued"
err_case "empty NAME is an error" '$(async-try ,true)' "async-try: got an empty NAME"
err_case "NAME with a colon is an error" '$(async-compile a:b,true)' \
	"async-compile: got a NAME with a character that is not allowed"
err_case "NAME with a blank is an error" '$(async-try a b,true)' "not allowed.*'a b'"
err_case "missing COMMAND is an error" '$(async-try x)' "insufficient number of arguments"
err_case "unknown NAME in wait is an error" '$(async-wait nope)' \
	"async-wait: no job named 'nope' is waiting"
err_case "waiting twice is an error" '$(async-try x,true)$(async-wait x)$(async-wait x)' \
	"async-wait: no job named 'x' is waiting (never queued, or already waited for)"

write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try x,echo 1)
$(async-wait x)
$(async-try x,echo 2)
$(async-wait x)
$(info x=$(x.out))
all: ; @:
EOF2
run_make
ok "a NAME can be reused once it was waited for" expect_grep '^x=2$' out

done_testing
