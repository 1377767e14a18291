#!/usr/bin/env bash
# test_symcache_e2e.sh - the symbol cache across recordings (README, "Symbol
# cache"; recorder/symbols/symcache.h).
#
# The workload is test_fde_names's (tests/kernel/workloads/hotlib/):
# hotprog calling a stripped libhot.so
# whose static functions hold the time (named by FDE ranges, which the
# cache carries) and whose exported hot_run is in .dynsym. Checked:
#  - a first recording fills an empty cache directory (one entry per
#    object with a build-id, libhot.so's among them);
#  - a cold and a warm recorder record the same run of hotprog at the
#    same time (-a, until it exits): both name its samples in libhot.so
#    with the same three functions (libhot.so+0xSTART for the static
#    ones, hot_run; hotprog's own main is hit too rarely to be in both
#    every time), and the warm one
#    read its entries (their mtimes move: touched on use) without
#    rewriting them (same inode);
#  - a damaged entry (one byte flipped) is ignored with a warning and
#    rebuilt byte for byte;
#  - a cache directory others may write is refused with a warning saying
#    why, and the recording goes on and names the same functions.
# (The exact equality of the tables for the same hits: test_symgather.)
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_symcache_e2e symcache
kt_need_root
[ -x "$perfrec" ] && [ -x "$analyze" ] || fail "build perfrec and perfrec-analyze first"
command -v gcc >/dev/null || skip "no gcc"

hotsrc=$src/tests/kernel/workloads/hotlib
gcc -O2 -fPIC -shared -Wl,--build-id -o "$d/libhot.so" "$hotsrc/hot.c" || fail "gcc libhot"
strip "$d/libhot.so"
gcc -O2 -Wl,--build-id -o "$d/hotprog" "$hotsrc/main.c" -L"$d" -lhot -Wl,-rpath,"$d" || fail "gcc hotprog"
bid=$(readelf -n "$d/libhot.so" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || fail "libhot.so has no build-id"

# hot SECONDS: hotprog runs for SECONDS of CPU time (pid in $hp)
hot() {
	"$d/hotprog" "$1" >/dev/null &
	hp=$!
	pids+=("$hp")
}
# rec NAME CACHE: records system-wide until hotprog has exited
rec() {
	PERFREC_SYMBOL_CACHE=$2 "$perfrec" record -a -e cpu-clock -F 4000 \
		-o "$d/$1.prec" -- bash -c "while kill -0 $hp 2>/dev/null; do sleep 0.05; done" \
		>"$d/$1.out" 2>&1
}
# names NAME: the functions of libhot.so that samples were named by
names() {
	"$analyze" report -s dso,sym --comm hotprog --csv "$d/$1.prec" >"$d/$1.csv" ||
		fail "report $1"
	awk -F, '/^# rows/ { f = 1; getline; next } f && NF >= 3 && $4 ~ /libhot/ { print $4 " " $5 }' \
		"$d/$1.csv" | sort -u
}

step "cold: an empty cache is filled"
cache=$d/cache
hot 1
rec first "$cache" || fail "record: $(tail -3 "$d/first.out")"
ent=$(ls "$cache" | grep "^$bid-.*\.sym$" | head -1)
[ -n "$ent" ] || fail "no entry for libhot.so ($bid) in $cache: $(ls "$cache" | head)"
ent=$cache/$ent
entries=$(ls "$cache" | grep -c '\.sym$')
echo "entries: $entries"
[ "$entries" -ge 3 ] || fail "only $entries entries (libhot, hotprog, libc expected)"
[ "$(stat -c %a "$cache")" = 755 ] || fail "cache mode $(stat -c %a "$cache")"
names first >"$d/first.names"
grep -q 'libhot.so+0x' "$d/first.names" || fail "no FDE-named function in libhot.so: $(cat "$d/first.names")"

step "cold and warm at once: the same names"
cp "$ent" "$d/entry.orig"
ino0=$(stat -c %i "$ent")
touch -d '2000-01-01' "$ent"
hot 1.5
sleep 0.2
rec cold "$d/cold-cache" &
cold=$!
rec warm "$cache" || fail "warm record: $(tail -3 "$d/warm.out")"
wait "$cold" || fail "cold record: $(tail -3 "$d/cold.out")"
names cold >"$d/cold.names"
names warm >"$d/warm.names"
echo "cold:"; cat "$d/cold.names"
# hot_mix, hot_sum (FDE ranges) and hot_run (.dynsym) hold all the time
[ "$(wc -l <"$d/cold.names")" = 3 ] || fail "expected 3 functions in libhot.so: $(cat "$d/cold.names")"
diff "$d/cold.names" "$d/warm.names" >&2 || fail "the warm cache named other functions than the files"
[ "$(stat -c %i "$ent")" = "$ino0" ] || fail "the warm recording rewrote the entry"
[ "$(stat -c %Y "$ent")" -gt 946684800 ] || fail "the warm recording did not use the entry (mtime not touched)"
grep -qi 'symbol cache' "$d/warm.out" && fail "warning with a sound cache: $(grep -i 'symbol cache' "$d/warm.out")"

step "a damaged entry: warned about, rebuilt"
size=$(stat -c %s "$ent")
printf '\xff' | dd of="$ent" bs=1 seek=$((size / 2)) conv=notrunc status=none
cmp -s "$ent" "$d/entry.orig" && fail "the entry was not damaged"
hot 1
rec damaged "$cache" || fail "record: $(tail -3 "$d/damaged.out")"
grep -q "entry $(basename "$ent") is damaged" "$d/damaged.out" ||
	fail "no warning about the damaged entry: $(cat "$d/damaged.out")"
cmp "$ent" "$d/entry.orig" || fail "the damaged entry was not rebuilt as it was"
names damaged | grep -q 'libhot.so+0x' || fail "libhot.so not named after the damaged entry"

step "a directory others may write: refused"
chmod 777 "$cache"
cp "$ent" "$d/entry.before"
touch -d '2000-01-01' "$ent"
hot 1
rec open "$cache" || fail "record with a refused cache: $(tail -3 "$d/open.out")"
grep -q "symbol cache off: .*world-writable" "$d/open.out" ||
	fail "no warning about the mode: $(cat "$d/open.out")"
[ "$(stat -c %Y "$ent")" -lt 946771200 ] || fail "an untrusted cache was read"
names open | grep -q 'libhot.so+0x' || fail "libhot.so not named without the cache"
chmod 755 "$cache"
echo "test_symcache_e2e: ok"
