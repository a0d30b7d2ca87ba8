#!/bin/sh
# The configuration seen through make: where it is found, what each key
# does, and how a broken file stops make.
. "$(dirname "$0")/lib.sh"
unset ASYNC_COMPILE_CONFIG
sm=${TEST_START_METHOD:-subprocess}
mkcfg() { # file lines...
	f=$1; shift
	{ printf 'start_method: %s\n' "$sm"; for l in "$@"; do printf '%s\n' "$l"; done; } >"$f"
}
stats_mk() { # [make text before the job]
	write_mk Makefile <<EOF2
load @PLUGIN@
${1:-}
\$(async-try x,true)
\$(async-wait)
\$(info \$(async-stats))
all: ; @:
EOF2
}

mkcfg explicit.yaml "workers: 3"
mkcfg makevar.yaml "workers: 4"
mkcfg envvar.yaml "workers: 5"
mkcfg asynccompile.yaml "workers: 6"
stats_mk '$(async-config explicit.yaml)
ASYNC_COMPILE_CONFIG := makevar.yaml'
ASYNC_COMPILE_CONFIG=envvar.yaml run_make
ok "\$(async-config FILE) comes first" expect_grep 'workers=3 .*config=explicit.yaml' out
stats_mk 'ASYNC_COMPILE_CONFIG := makevar.yaml'
ASYNC_COMPILE_CONFIG=envvar.yaml run_make
ok "then the make variable ASYNC_COMPILE_CONFIG" expect_grep 'workers=4 .*config=makevar.yaml' out
stats_mk
ASYNC_COMPILE_CONFIG=envvar.yaml run_make
ok "then the environment variable" expect_grep 'workers=5 .*config=envvar.yaml' out
stats_mk
run_make MARK=$$
ok "then asynccompile.yaml in make's directory" expect_grep 'workers=6 .*config=asynccompile.yaml' out
rm asynccompile.yaml
run_make MARK=$$
ok "otherwise the built-in defaults" expect_grep "workers=$(nproc) start_method=subprocess config=built-in-defaults" out

# workers: 1 serialises even with -j4.
mkcfg asynccompile.yaml "workers: 1"
{ echo "load $ASYNC_PLUGIN"
  for i in 1 2 3 4; do printf '$(async-try s%d,%s)\n' "$i" "$(span_cmd "$TRASH/log" "s$i" 0.2)"; done
  echo '$(async-wait)'; echo 'all: ; @:'; } >Makefile
rm -f log; run_make -j4
ok "workers: 1 runs one job at a time under -j4" expect_eq 1 "$(max_overlap log)" "max overlap"
# workers: 3 under -j4: three reach a barrier of three, no fourth joins.
mkcfg asynccompile.yaml "workers: 3"
{ echo "load $ASYNC_PLUGIN"
  for i in 1 2 3 4; do printf '$(async-try s%d,%s)\n' "$i" "$(barrier_cmd "$TRASH/log" "$TRASH/bar" 3 "s$i")"; done
  echo '$(async-wait)'; echo 'all: ; @:'; } >Makefile
rm -rf log bar bar.timeout; mkdir bar; run_make -j4
ok "workers: 3 caps -j4 at three" \
	sh -c '[ ! -e bar.timeout ] || { echo "three never ran at once"; exit 1; }; [ "$0" -le 3 ] || { sort -n log; exit 1; }' "$(max_overlap log)"

# launcher and env
cat >wrap.sh <<'EOF2'
#!/bin/sh
echo "wrapped:$FROMCFG"
exec "$@"
EOF2
chmod +x wrap.sh
mkcfg asynccompile.yaml "launcher: [$TRASH/wrap.sh]" "env: {FROMCFG: yes-it-is}"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try a,echo payload)
$(async-try b,echo "$$FROMCFG")
$(async-wait)
$(info a=$(a.out) b=$(b.out))
all: ; @:
EOF2
run_make MARK=$$
ok "launcher prefixes every command and env reaches the job" \
	expect_grep '^a=wrapped:yes-it-is payload b=wrapped:yes-it-is yes-it-is$' out

# timeout, kill_grace, max_output
mkcfg asynccompile.yaml "timeout: 1s" "kill_grace: 200ms" "max_output: 1KiB"
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try slow,trap "" TERM; sleep 1001.$(MARK); echo never)
$(async-try big,head -c 5000 /dev/zero | tr '\0' x)
$(async-wait)
$(info slow=$(slow.status) big=$(big.status) len=$(words $(subst x,x ,$(big.out))))
$(info slowerr=$(slow.err))
$(info bigerr=$(big.err))
all: ; @:
EOF2
run_make MARK=$$
ok "timeout: a job that ignores SIGTERM ends with status 124" expect_grep '^slow=124 big=0 len=1024$' out
ok "the timeout is explained in NAME.err" expect_grep '^slowerr=.*timed out' out
ok "max_output: output is capped and the cap is noted" expect_grep '^bigerr=.*truncated' out
ok "the timed-out job's process is gone" sh -c "! pgrep -f '[s]leep 1001.$$' >/dev/null"

# echo: true overrides -s; echo: false silences
write_mk Makefile <<'EOF2'
load @PLUGIN@
all: ; $(async-compile t,true)$(async-wait)
EOF2
mkcfg asynccompile.yaml "echo: true"
run_make -s
ok "echo: true echoes build steps even under -s" expect_grep '^true$' out
mkcfg asynccompile.yaml "echo: false"
run_make MARK=$$
ok "echo: false: make exits 0" expect_make_ok
ok "echo: false never echoes" expect_no_grep '^true$' out

# A broken file stops make with file:line:column, and nothing runs.
printf 'start_method: %s\nworkers: 2\nworker: 3\n' "$sm" >asynccompile.yaml
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try a,touch ran)
all: ; @:
EOF2
run_make MARK=$$
diag "broken config: $(cat err)"
ok "unknown key: make stops with exit 2" expect_eq 2 "$make_status"
ok "the message names file, line, column and suggests the key" \
	expect_grep "^Makefile:2: \*\*\* async-try: asynccompile.yaml:3:1: unknown key 'worker' (did you mean 'workers'?)" err
ok "no job ran" test ! -e ran
printf 'timeout: [1\n' >asynccompile.yaml
run_make MARK=$$
ok "YAML syntax error names line and column" expect_grep "asynccompile.yaml:[0-9]*:[0-9]*: YAML syntax error" err
printf 'workers: lots\n' >asynccompile.yaml
run_make MARK=$$
ok "a bad value names key and value" expect_grep "asynccompile.yaml:1:10: workers: .*'lots'" err
rm asynccompile.yaml
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-config nope.yaml)
all: ; @:
EOF2
run_make MARK=$$
ok "async-config with a missing file is an error" expect_grep "async-config: nope.yaml: cannot open" err

write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try a,true)
$(async-config other.yaml)
all: ; @:
EOF2
mkcfg other.yaml "workers: 2"
run_make MARK=$$
ok "async-config after the pool started is an error" expect_grep "async-config: the pool already runs" err

# The worker prints the effective configuration, found the same way.
W=${ASYNC_COMPILE_WORKER:-$TEST_ROOT/worker/asynccompile-worker}
printf 'workers: 3\nlauncher: [ccache]\n' >asynccompile.yaml
"$W" --print-config >printed 2>&1
ok "--print-config shows the file found and its values" \
	sh -c 'grep -qx "# from: asynccompile.yaml" printed && grep -qx "workers: 3" printed && grep -qx "launcher: \[\"ccache\"\]" printed && grep -qx "kill_grace: 5s" printed'
"$W" --print-config printed >reprinted 2>&1
ok "--print-config output loads back to the same configuration" \
	expect_eq "$(sed 1d printed)" "$(sed 1d reprinted)"
printf 'worker: 3\n' >bad.yaml
"$W" --print-config bad.yaml >printed 2>&1; rc=$?
ok "--print-config on a bad file: exit 1 and the message" \
	sh -c '[ "$0" -eq 1 ] && grep -q "bad.yaml:1:1: unknown key" printed' "$rc"
rm -f asynccompile.yaml

# A dangling link ./asynccompile.yaml: make and the worker both find it
# (lstat) and both stop with the same reason, not fall back to defaults.
ln -s missing-target.yaml asynccompile.yaml
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try x,true)
all: ; @:
EOF2
run_make
ok "./asynccompile.yaml a dangling link: make stops with cannot open" \
	expect_grep "asynccompile.yaml: cannot open: No such file or directory" err
"$W" --print-config >printed 2>&1; rc=$?
ok "./asynccompile.yaml a dangling link: --print-config exits 1, same message" \
	sh -c '[ "$0" -eq 1 ] && grep -q "asynccompile.yaml: cannot open: No such file or directory" printed && ! grep -q "^# from:" printed' "$rc"
rm -f asynccompile.yaml

# A config file that is a FIFO: open() would wait for a writer for ever.
# A hang is a failure after 20 s, not a stuck suite.
mkfifo asynccompile.yaml ff.yaml
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-try x,true)
all: ; @:
EOF2
TEST_MAKE_TIMEOUT=20 run_make
ok "./asynccompile.yaml a FIFO: make stops at once, exit 2" expect_eq 2 "$make_status" "make's exit status"
ok "./asynccompile.yaml a FIFO: the error names the file" \
	expect_grep "async-try: asynccompile.yaml: cannot read: not a regular file (a FIFO)" err
rm asynccompile.yaml
write_mk Makefile <<'EOF2'
load @PLUGIN@
$(async-config ff.yaml)
all: ; @:
EOF2
TEST_MAKE_TIMEOUT=20 run_make
ok "async-config FIFO: make stops at once, exit 2" expect_eq 2 "$make_status" "make's exit status"
ok "async-config FIFO: the error names the file" \
	expect_grep "async-config: ff.yaml: cannot read: not a regular file (a FIFO)" err
timeout 20 "$W" --print-config ff.yaml >printed 2>&1; rc=$?
ok "--print-config FIFO: exit 1 and the message" \
	sh -c '[ "$0" -eq 1 ] && grep -q "ff.yaml: cannot read: not a regular file (a FIFO)" printed' "$rc"
rm ff.yaml

done_testing
