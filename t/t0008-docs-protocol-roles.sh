#!/bin/sh
# PROTOCOL.md's roles table ("Roles: who accepts what") lists exactly the
# routes of the roles' tables in the code (lib/msgtab.h): each role, the
# file its table is in, each message type it accepts and on which ids.
. "$(dirname "$0")/lib.sh"

cd "$TEST_ROOT" || exit 1

# From the code: every file that declares a table.  A table's rows,
# `{ MSG_TYPE, MSG_ON_SCOPE, handler },` one per line, are in a
# `struct msg_route NAME[]` array; `MSG_TABLE("role", NAME)` names the role.
grep -lE 'MSG_TABLE\("' lib/*.c pool/*.c plugin/*.c worker/*.c >"$TRASH/files"
while read -r f; do
	awk -v file="$f" '
	function scope(s) {
		j = s ~ /MSG_ON_JOB/; c = s ~ /MSG_ON_CONTROL/
		return j && c ? "0 or job" : j ? "job" : c ? "0" : "?"
	}
	/struct msg_route [a-z_0-9]+\[\] = \{/ {
		cur = $0; sub(/.*struct msg_route /, "", cur); sub(/\[.*/, "", cur); next
	}
	cur != "" && /^[ \t]*\{ MSG_[A-Z_]+,/ {
		t = $0; sub(/^[ \t]*\{ MSG_/, "", t); sub(/,.*/, "", t)
		s = $0; sub(/^[^,]*,/, "", s); sub(/,[^,]*$/, "", s)
		rows[cur] = rows[cur] t ";" scope(s) "\n"; next
	}
	cur != "" && /^\};/ { cur = ""; next }
	/MSG_TABLE\("/ {
		role = $0; sub(/.*MSG_TABLE\("/, "", role); name = role
		sub(/".*/, "", role); sub(/^[^"]*", */, "", name); sub(/\).*/, "", name)
		n = split(rows[name], r, "\n")
		for (i = 1; i < n; i++)
			print role ";" file ";" r[i]
	}' "$f"
done <"$TRASH/files" | LC_ALL=C sort >"$TRASH/code"

# From the doc: the rows of the table under "### Roles".
sed -n '/^### Roles/,/^##/p' PROTOCOL.md |
	awk -F'|' 'NF > 6 && $3 ~ /\.c *$/ {
		for (i = 2; i <= 5; i++) { gsub(/^ +| +$/, "", $i) }
		print $2 ";" $3 ";" $4 ";" $5
	}' | LC_ALL=C sort >"$TRASH/doc"

ok "the code has the tables of six roles" \
	expect_eq 6 "$(cut -d';' -f1 "$TRASH/code" | sort -u | wc -l | tr -d ' ')" "roles in the code"
ok "PROTOCOL.md's roles table has rows" test -s "$TRASH/doc"
ok "every route in the code is a row of PROTOCOL.md's roles table" \
	expect_eq "" "$(LC_ALL=C comm -23 "$TRASH/code" "$TRASH/doc" | tr '\n' ' ')" "undocumented"
ok "every row of PROTOCOL.md's roles table is a route in the code" \
	expect_eq "" "$(LC_ALL=C comm -13 "$TRASH/code" "$TRASH/doc" | tr '\n' ' ')" "not in the code"

done_testing
