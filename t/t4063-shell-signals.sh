#!/bin/sh
# test: per-start-method
# A command async-shell runs while make waits for it ends with make, as a
# $(shell) command does: Ctrl-C (SIGINT to make's process group), SIGTERM
# or SIGKILL to the group, or a signal to make alone (issue 22, item 5).
. "$(dirname "$0")/lib.sh"

M=1263.$$

write_mk Makefile <<EOF2
load @PLUGIN@
X := \$(async-shell sleep $M; echo M)
all: ; @:
EOF2

# start_make: make as the leader of a process group (and session) of its
# own, as a shell with job control starts it, with SIGINT and SIGQUIT not
# ignored (a shell without job control ignores them in what it starts with
# &); $mpid is make's pid and group.  Returns once the command runs.
start_make() {
	rm -rf "$XDG_CACHE_HOME" # no record: the call runs in make's process
	env --default-signal=INT,QUIT setsid "$MAKE_UT" >out 2>err &
	mpid=$!
	wait_until running "$M" 1
}
signum() { case $1 in INT) echo 2 ;; TERM) echo 15 ;; KILL) echo 9 ;; esac; }
# end_make SIGNAL TARGET: send it, then make's exit status in $st
end_make() {
	kill -"$1" "$2"
	st=0
	wait "$mpid" || st=$?
}

for sig in INT TERM KILL; do
	start_make
	ok "SIG$sig to make's group: the command is running first" running "$M" 1
	end_make "$sig" "-$mpid"
	ok "SIG$sig to make's group: make dies of it (status $st)" \
		expect_eq "$((128 + $(signum "$sig")))" "$st" "make's status"
	ok "SIG$sig to make's group: the command is gone" none_left "$M"
done

# To make alone, the signal reaches the command's own process (what that
# process started is its business: a shell's `sleep` outlives it, as with
# $(shell)).  SIGTERM: a shell told SIGINT alone waits for its child
# first, as shells do for Ctrl-C, which reaches the whole group.
shell_gone() {
	wait_until sh -c '! pgrep -f "^/bin/sh -c sleep $0; echo M\$"' "$M"
}
for sig in TERM; do
	start_make
	end_make "$sig" "$mpid"
	ok "SIG$sig to make alone: make dies of it (status $st)" \
		expect_eq "$((128 + $(signum "$sig")))" "$st" "make's status"
	ok "SIG$sig to make alone: the command's shell is gone" shell_gone
	pkill -f "^sleep $M\$"
done

done_testing
