# .ci/apt-private.sh - sourced (POSIX sh) by .ci/build-make44.sh and
# bench/fetch-source.sh: apt with a private configuration (its own source
# list, package lists and cache under $apt_dir), so the machine's apt state
# is never touched, and a deb-src entry derived from the machine's own
# entry for its release (same URI, same Signed-By) with the suite changed,
# so whatever mirror or proxy the host uses is used and no host name is
# written down here.
#
#   apt_private_setup APT_DIR HOST_SUITE NEW_SUITE
#       writes the derived deb-src entry; returns 1 if the host has no
#       entry for HOST_SUITE to derive it from.  Sets apt_dir and parts.
#   apt_private ARGS...
#       apt-get -q -y ARGS with that configuration, no stdin.

# deb822 .sources: print the first enabled paragraph whose Suites contain
# exactly the host suite (not -updates/-security), rewritten to a deb-src
# entry for the new suite.  Signed-By is kept verbatim, including an
# inline key block (its continuation lines start with a space).
from_deb822() { # file
	awk -v suite="$host_suite" -v newsuite="$new_suite" '
	function flush(   n, i, w, hit, u) {
		if (!nf) return
		hit = 0
		n = split(f["suites"], w, /[ \t]+/)
		for (i = 1; i <= n; i++) if (w[i] == suite) hit = 1
		if (tolower(f["enabled"]) == "no") hit = 0
		split(f["uris"], u, /[ \t]+/)
		if (hit && u[1] != "" && !done) {
			print "Types: deb-src"
			print "URIs: " u[1]
			print "Suites: " newsuite
			print "Components: main"
			if (signed != "") print "Signed-By:" signed
			done = 1
		}
		delete f; signed = ""; insigned = 0; nf = 0
	}
	/^[ \t]*#/ { next }
	/^[ \t]*$/ { flush(); next }
	/^[ \t]/ { if (insigned) signed = signed "\n" $0; next }
	{
		nf++
		key = tolower(substr($0, 1, index($0, ":") - 1))
		val = substr($0, index($0, ":") + 1)
		insigned = (key == "signed-by")
		if (insigned) signed = val
		sub(/^[ \t]+/, "", val); sub(/[ \t]+$/, "", val)
		f[key] = val
	}
	END { flush() }' "$1"
}

# One-line .list format: "deb [opts] URI SUITE COMPONENTS...".
from_list() { # file
	awk -v suite="$host_suite" -v newsuite="$new_suite" '
	/^[ \t]*#/ || NF < 3 { next }
	$1 != "deb" && $1 != "deb-src" { next }
	{
		i = 2; opts = ""
		if ($2 ~ /^\[/) {
			while (i <= NF) { opts = opts " " $i; if ($i ~ /\]$/) break; i++ }
			i++
		}
		if ($(i + 1) != suite) next
		gsub(/^ \[|\]$/, "", opts)
		print "deb-src" (opts == "" ? "" : " [" opts "]") " " $i " " newsuite " main"
		exit
	}' "$1"
}

apt_private_setup() { # apt_dir host_suite new_suite
	apt_dir=$1 host_suite=$2 new_suite=$3
	parts=$apt_dir/sources.list.d
	rm -rf "$parts"
	mkdir -p "$parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"

	entry=
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		entry=$(from_deb822 "$f")
		if [ -n "$entry" ]; then
			printf '%s\n' "$entry" >"$parts/$new_suite-src.sources"
			break
		fi
	done
	if [ -z "$entry" ]; then
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			entry=$(from_list "$f")
			if [ -n "$entry" ]; then
				printf '%s\n' "$entry" >"$parts/$new_suite-src.list"
				break
			fi
		done
	fi
	[ -n "$entry" ]
}

apt_private() {
	DEBIAN_FRONTEND=noninteractive apt-get -q -y \
		-o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$parts" \
		-o Dir::State::Lists="$apt_dir/lists" \
		-o Dir::Cache="$apt_dir/cache" \
		-o Acquire::Languages=none \
		-o APT::Sandbox::User=root \
		"$@" </dev/null
}
