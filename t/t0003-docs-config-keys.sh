#!/bin/sh
# asynccompile.yaml(5) documents exactly the keys of the config key table,
# in its order, with its defaults; its unknown-key example lists them, and
# its example loads with the values it claims.
#
# The key list comes from the built worker, not from the C sources: the
# unknown-key error lists every key of the table, and --print-config
# dumps every key in the table's order; the two must agree first.
. "$(dirname "$0")/lib.sh"

worker=${ASYNC_COMPILE_WORKER:-$TEST_ROOT/worker/asynccompile-worker}
page=${TEST_MAN5:-$TEST_ROOT/man/asynccompile.yaml.5}
[ -x "$worker" ] || skip_all "$worker not built (run make)"
[ -f "$page" ] || skip_all "$page not found"

# Keys named by the unknown-key error: "... (valid keys: a, b, c)".
printf 'asynccompile_t0003_no_such_key: 1\n' >unknown.yaml
"$worker" --print-config unknown.yaml >/dev/null 2>unknown.err
sed -n 's/.*(valid keys: \(.*\))$/\1/p' unknown.err | tr -d ' ' | tr ',' '\n' >keys.error
# Keys of the dump of the defaults, one top-level "key:" a line.
: >empty.yaml
"$worker" --print-config empty.yaml >dump.yaml 2>dump.err
sed -n 's/^\([a-z_][a-z_0-9]*\):.*/\1/p' dump.yaml >keys.dump

nonempty() { # file what
	[ -s "$1" ] && return 0
	echo "no keys found in $2:"; cat unknown.err dump.err 2>/dev/null
	return 1
}
ok "the unknown-key error lists the key table" nonempty keys.error "the unknown-key error"
ok "--print-config dumps the key table" nonempty keys.dump "the dump"
ok "the error and the dump name the same keys in the same order" \
	expect_eq "$(cat keys.error)" "$(cat keys.dump)" "keys"

# Keys the page documents: each is a ".TP" then ".B key" in section KEYS.
sed -n '/^\.SH KEYS/,/^\.SH /p' "$page" |
	awk 'prev == ".TP" && $1 == ".B" { print $2 } { prev = $0 }' >keys.page
missing() { # documented table
	out=$(grep -vxF -f "$1" "$2")
	[ -z "$out" ] && return 0
	printf '%s\n' "$out"
	return 1
}
ok "every key of the table is documented in asynccompile.yaml(5)" \
	missing keys.page keys.error
ok "asynccompile.yaml(5) documents no key the table lacks" \
	missing keys.error keys.page
ok "asynccompile.yaml(5) lists the keys in the table's order" \
	expect_eq "$(cat keys.error)" "$(cat keys.page)" "keys"

# Each key's "Default: \fBVALUE\fR" is what the table's defaults dump as.
sed -n '/^\.SH KEYS/,/^\.SH /p' "$page" |
	awk 'prev == ".TP" && $1 == ".B" { key = $2 }
	     /^Default: / { sub(/^Default: \\fB/, ""); sub(/\\fR.*/, "");
			    gsub(/\\e/, "\\"); print key ": " $0 } { prev = $0 }' >defaults.page
grep -v '^#' dump.yaml | grep -v '^ ' >defaults.dump
ok "each key's documented default is the table's" \
	expect_eq "$(cat defaults.dump)" "$(cat defaults.page)" "defaults"

# The page's example of the unknown-key error lists the table's keys.
sed -n "s/^cfg\.yaml:1:1: unknown key 'jobs' (valid keys: \(.*\))$/\1/p" "$page" |
	tr -d ' ' | tr ',' '\n' >keys.page-error
ok "the page's unknown-key example lists the keys of the table" \
	expect_eq "$(cat keys.error)" "$(cat keys.page-error)" "keys"

# The EXAMPLE section: one file with every key, that loads as documented.
sed -n '/^\.SH EXAMPLE/,/^\.SH /p' "$page" | sed -n '/^\.nf$/,/^\.fi$/p' |
	sed -e '1d' -e '$d' -e 's/^\\&//' -e 's/\\e/\\/g' >example.yaml
sed -n 's/^\([a-z_][a-z_0-9]*\):.*/\1/p' example.yaml >keys.example
ok "the example sets every key of the table, in its order" \
	expect_eq "$(cat keys.error)" "$(cat keys.example)" "keys"
"$worker" --print-config example.yaml >example.dump 2>example.err
example_status=$?
loads() {
	[ "$example_status" -eq 0 ] && return 0
	cat example.err example.yaml
	return 1
}
ok "the example loads" loads
value() { sed -n "s/^$1: //p" example.dump; }
ok "the example's values are the ones it claims" expect_eq \
	'workers=auto timeout=10m launcher=["ccache"] max_output=16MiB' \
	"workers=$(value workers) timeout=$(value timeout) launcher=$(value launcher) max_output=$(value max_output)"
ok "the example's env is LC_ALL, CCACHE_DIR and an empty EMPTY" \
	expect_eq 'LC_ALL: "C"|CCACHE_DIR: "/var/cache/ccache"|EMPTY: ""' \
	"$(sed -n '/^env:/,/^[a-z]/p' example.dump | sed -n 's/^  //p' | paste -sd'|')" env

done_testing
