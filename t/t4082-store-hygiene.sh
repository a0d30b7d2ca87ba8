#!/bin/sh
# The store keeps within its bounds: async-shell's speculation records
# expire with cache_max_age as cache entries do, and cache_max_size
# bounds entries and records together (answer/cache.h, cache_evict()).
. "$(dirname "$0")/lib.sh"
store=$XDG_CACHE_HOME/asynccompile
write_mk Makefile <<'EOF2'
load @PLUGIN@
A := $(async-shell echo one $(N))
$(info $(filter speculated=%,$(async-stats)))
all: ; @:
EOF2
write_config "cache_max_age: 1d"
records() { ls "$store" | grep -c '^rec-'; }

N=1 run_make
ok "a first run: exits 0" expect_make_ok
ok "a first run writes one record" expect_eq 1 "$(records)" "records"
rec=$(ls "$store" | grep '^rec-')
N=1 run_make
ok "a record used within cache_max_age: its command is speculated" expect_grep '^speculated=1$' out

# unused for longer than cache_max_age: not read, and removed
touch -d '2 days ago' "$store/$rec"
cp -p "$store/$rec" "$store/rec-00000000000000aa"
rm -f "$store/.evicted"
N=2 ASYNC_COMPILE_DEBUG=2 run_make
ok "a record unused for longer than cache_max_age is not speculated" expect_grep '^speculated=0$' out
ok "... and says why under ASYNC_COMPILE_DEBUG" expect_grep 'unused for longer than cache_max_age' err
ok "an expired record is removed when the store is next written" test ! -e "$store/rec-00000000000000aa"
ok "the record just written stays" test -e "$store/$rec"
N=2 run_make
ok "a record read renews its time: still speculated next run" expect_grep '^speculated=1$' out

# beyond cache_max_size: the least recently used go, records and cache entries alike
write_config "cache: true" "cache_max_age: 1d" "cache_max_size: 1MiB"
N=3 run_make
head -c 1500000 /dev/zero >"$store/rec-00000000000000bb"
head -c 1500000 /dev/zero >"$store/cache/c-00000000000000cc"
touch -d '2 hours ago' "$store/cache/c-00000000000000cc"
touch -d '1 hour ago' "$store/rec-00000000000000bb"
head -c 1000 /dev/zero >"$store/rec-00000000000000dd"
touch -d '30 minutes ago' "$store/rec-00000000000000dd"
rm -f "$store/.evicted"
N=5 run_make
ok "cache_max_size: make exits 0" expect_make_ok
ok "beyond cache_max_size: the oldest cache entry is removed" test ! -e "$store/cache/c-00000000000000cc"
ok "beyond cache_max_size: the oldest record is removed" test ! -e "$store/rec-00000000000000bb"
ok "once within cache_max_size, newer files stay" test -e "$store/rec-00000000000000dd"
ok "the record in use stays" test -e "$store/$rec"

# at most once an hour
head -c 1500000 /dev/zero >"$store/rec-00000000000000ee"
touch -d '1 hour ago' "$store/rec-00000000000000ee"
N=6 run_make
ok "eviction runs at most once an hour" test -e "$store/rec-00000000000000ee"

# the default is 256 MiB: a bad value is a config error naming the key
write_config "cache_max_size: 512KiB"
run_make
ok "cache_max_size below 1MiB: make stops" expect_grep "cache_max_size: 512KiB is out of range (1MiB..1024GiB)" err

done_testing
