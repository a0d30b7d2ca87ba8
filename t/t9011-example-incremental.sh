#!/bin/sh
# examples/incremental: the many-files recipe README and asynccompile(7)
# tell users to copy.  Built with the plugin and, as plain.mk, by stock
# pattern rules: after the same edits (a source, a header, a removed
# object) exactly the same objects are rebuilt, and the results are the
# same bytes.
. "$(dirname "$0")/lib.sh"

command -v cc >/dev/null 2>&1 || skip_all "no C compiler (cc)"
write_config

rm -rf inc plain
cp -R "$TEST_ROOT/examples/incremental" inc
cp -R "$TEST_ROOT/examples/incremental" plain
rm -f inc/*.o inc/*.d inc/objs.stamp inc/prog plain/*.o plain/*.d plain/prog

build() { # dir [make args...]: the plugin's in inc, stock rules in plain
	d=$1; shift
	if [ "$d" = inc ]; then
		run_make -C inc ASYNC_COMPILE_PLUGIN="$ASYNC_PLUGIN" "$@"
	else
		run_make -C plain -f plain.mk "$@"
	fi
	cp out "$d.out"; cp err "$d.err"
}
# every file back to one old time, and a reference just after it, so that
# what a build writes is newer than the reference (no sleeps needed)
age() {
	for d in inc plain; do
		find "$d" -type f -exec touch -d '2020-01-01 00:00:00' {} +
	done
	touch -d '2020-01-01 00:00:01' ref
}
rebuilt() { # dir: the objects newer than the reference
	(cd "$1" && find . -name '*.o' -newer ../ref | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' ')
}
compiled() { # dir: the objects whose compile command make echoed
	sed -n 's/.* -c [a-z]*\.c -o \([a-z]*\.o\)$/\1/p' "$1.out" | LC_ALL=C sort | tr '\n' ' '
}
both_build() { # what [make args...]: build both, check both exited 0
	w=$1; shift
	build inc "$@"; ok "$w: the plugin's build succeeds" expect_make_ok
	build plain "$@"; ok "$w: the stock build succeeds" expect_make_ok
}
same_rebuilt() { # what expected
	ok "$1: the plugin rebuilds exactly $2" expect_eq "$2" "$(rebuilt inc)" "rebuilt objects"
	ok "$1: stock make rebuilds exactly $2" expect_eq "$2" "$(rebuilt plain)" "rebuilt objects"
	ok "$1: the plugin compiles exactly $2" expect_eq "$2" "$(compiled inc)" "compiled objects"
}
same_result() { # what
	ok "$1: the program says the same" sh -c './inc/prog >a && ./plain/prog >b && cmp a b && grep -qx "hello, world" a'
	ok "$1: the objects are the same bytes" sh -c 'for o in main greet count util; do
		cmp inc/$o.o plain/$o.o || exit 1; done'
}

both_build "first build" -j2
ok "first build: the plugin compiles every source" \
	expect_eq "count.o greet.o main.o util.o " "$(compiled inc)" "compiled objects"
ok "first build: the compile command carries the \$(comma)" \
	expect_grep ' -Wa,--noexecstack -c main.c -o main.o$' inc.out
same_result "first build"

age
both_build "nothing changed" -j2
same_rebuilt "nothing changed" ""
ok "nothing changed: the plugin does not relink" sh -c '! [ inc/prog -nt ref ]'

age
touch inc/main.c plain/main.c
both_build "main.c touched" -j2
same_rebuilt "main.c touched" "main.o "
ok "main.c touched: the program is relinked" sh -c '[ inc/prog -nt ref ] && [ plain/prog -nt ref ]'

age
touch inc/util.h plain/util.h
both_build "util.h touched" -j2
same_rebuilt "util.h touched" "count.o greet.o util.o "
same_result "util.h touched"

age
touch inc/greet.h plain/greet.h
both_build "greet.h touched, no -j"
same_rebuilt "greet.h touched, no -j" "greet.o main.o "

age
rm inc/count.o plain/count.o
both_build "count.o removed" -j2
same_rebuilt "count.o removed" "count.o "
same_result "count.o removed"

# A compile error fails the build; once fixed, the next run compiles what
# the failed run left to do.
age
cp inc/greet.c greet.c.orig
echo 'int broken(void) { return }' >>inc/greet.c
touch inc/count.c
build inc -j2
ok "a compile error fails the plugin's build" expect_eq 2 "$make_status" "exit status"
ok "the failure names the object" expect_grep 'greet.o (status 1)' inc.err
ok "the program is not relinked" sh -c '! [ inc/prog -nt ref ]'
cp greet.c.orig inc/greet.c
build inc -j2
ok "after the fix the build succeeds" expect_make_ok
ok "after the fix greet.c is compiled again" expect_grep ' -c greet.c -o greet.o$' inc.out
ok "no jobserver token message" expect_no_grep INTERNAL inc.err

# README and asynccompile(7) show this makefile: each of their lines is
# one of its lines (but the load line, which names the built tree).
doc_lines_in_example() { # file-with-the-doc's-lines
	n=0
	while IFS= read -r l; do
		case $l in ''|load\ *|\#*) continue ;; esac
		n=$((n + 1))
		grep -qxF -- "$l" "$TEST_ROOT/examples/incremental/Makefile" ||
			{ echo "not in examples/incremental/Makefile: [$l]"; return 1; }
	done <"$1"
	[ "$n" -ge 20 ] || { echo "only $n lines found"; return 1; }
}
sed -n '/^    load \/path\/to\/asynccompile\/asynccompile.so$/,/^    FORCE:$/p' "$TEST_ROOT/README" |
	sed -n '/^    SRCS := main.c greet.c/,$p' | sed 's/^    //' >readme.mk
ok "README's many-files recipe is the tested one" doc_lines_in_example readme.mk
sed -n '/^SRCS := main.c greet.c/,/^FORCE:$/p' "$TEST_ROOT/man/asynccompile.7" |
	sed -e 's/\\-/-/g' -e 's/\\e/\\/g' >man.mk
ok "asynccompile(7)'s many-files recipe is the tested one" doc_lines_in_example man.mk

done_testing
