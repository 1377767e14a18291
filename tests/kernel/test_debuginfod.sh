#!/usr/bin/env bash
# test_debuginfod.sh - a trace of a stripped program is named from its
# debug file, fetched by build-id from a debuginfod server.
#
# The test builds a program with -g -O2 (static functions dbg_mix and
# dbg_sum hold the time, under main), strips a copy and records the copy
# (cpu-clock, --call-graph dwarf). Debian's debuginfod serves the -g build
# from a directory on a loopback port, in a network namespace with only a
# loopback (the server cannot be told to listen on 127.0.0.1 alone). Checked:
#  - without DEBUGINFOD_URLS the program's frames are function ranges
#    (dbg+0x...), never its function names;
#  - with DEBUGINFOD_URLS (and DEBUGINFOD_CACHE_PATH in the test dir),
#    dbg_mix, dbg_sum and main are named and no frame of the program is
#    left as a range or an address; the debug file is in the cache;
#  - with the server stopped, the cache alone names them again.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_debuginfod dbgi
kt_need_root
[ -x "$perfrec" ] && [ -x "$analyze" ] || fail "build perfrec and perfrec-analyze first"
command -v debuginfod >/dev/null || skip "no debuginfod server (apt-get install debuginfod)"
ldd "$analyze" | grep libdebuginfod >/dev/null ||
  skip "perfrec-analyze was built without libdebuginfod (apt-get install libdebuginfod-dev)"
unset DEBUGINFOD_URLS

mkdir "$d/debug" "$d/bin"
cat >"$d/dbg.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
__attribute__((noinline)) static uint64_t dbg_mix(uint64_t x, int n)
{
	for (int i = 0; i < n; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		x = x * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	}
	return x;
}
__attribute__((noinline)) static uint64_t dbg_sum(const uint64_t *v, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++)
		s += v[i] * (uint64_t)(i | 1) + (s >> 3);
	return s;
}
int main(int argc, char **argv)
{
	static uint64_t v[4096];
	struct timespec t0, t;
	double secs = argc > 1 ? atof(argv[1]) : 1;
	uint64_t x = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = dbg_mix(x, 4096);
		for (int i = 0; i < 4096; i++)
			v[i] = x + (uint64_t)i;
		x ^= dbg_sum(v, 4096);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%llu\n", (unsigned long long)x);
	return 0;
}
EOF
gcc -g -O2 -Wl,--build-id -o "$d/debug/dbg" "$d/dbg.c" || fail "gcc"
cp "$d/debug/dbg" "$d/bin/dbg"
strip "$d/bin/dbg"
nm "$d/bin/dbg" 2>&1 | grep -q 'no symbols' || fail "the recorded copy is not stripped"
bid=$(readelf -n "$d/bin/dbg" | awk '/Build ID/ { print $3 }')
[ -n "$bid" ] || fail "no build-id in dbg"

"$perfrec" record -e cpu-clock -F 2000 --call-graph dwarf -o "$d/t.prec" -- "$d/bin/dbg" 2 \
  >"$d/run.out" 2>&1 || fail "record: $(tail -5 "$d/run.out")"

# The server listens on every interface (it has no address option): it
# runs in a network namespace of its own that has only a loopback, with
# the clients that ask it (run: empty before the server starts).
run=()
rows() {   # the program's frames, by name, from folded stacks
  "${run[@]}" "$analyze" export --format folded "$d/t.prec" "$@" |
    awk '$1 ~ /^dbg;/ { sub(/ [0-9]+$/, ""); n = split($0, a, ";"); for (i = 2; i <= n; i++) print a[i] }' |
    sort -u
}
rows >"$d/plain.txt"
grep -q '^dbg+0x' "$d/plain.txt" || fail "without debuginfod, no function range of dbg: $(head -5 "$d/plain.txt")"
! grep -qE '^(dbg_mix|dbg_sum)$' "$d/plain.txt" || fail "dbg's functions named without its debug file"

unshare --net sleep 3600 &
nspid=$!
pids+=("$nspid")
sleep 0.1
run=(nsenter -t "$nspid" -n)
"${run[@]}" ip link set lo up || fail "cannot bring up the namespace's loopback"
port=$(free_ports 1)
"${run[@]}" debuginfod -F "$d/debug" -p "$port" -d "$d/db.sqlite" -t 0 -g 0 >"$d/server.log" 2>&1 &
server=$!
pids+=("$server")
# the server scans its directory in the background: ready when it serves
ok=0
for _ in $(seq 300); do
  if "${run[@]}" curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$bid/debuginfo"; then
    ok=1
    break
  fi
  sleep 0.1
done
[ $ok = 1 ] || fail "debuginfod did not serve $bid within 30 s: $(tail -5 "$d/server.log")"

export DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$d/cache"
rows >"$d/named.txt"
echo "frames of dbg: $(tr '\n' ' ' <"$d/plain.txt")"
echo "with debuginfod: $(tr '\n' ' ' <"$d/named.txt")"
for fn in dbg_mix dbg_sum main; do
  grep -qE "^$fn(\\.[a-z0-9.]+)?\$" "$d/named.txt" || fail "$fn is not named through debuginfod"
done
! grep -qE '^(dbg\+0x|\[dbg\]\+0x)' "$d/named.txt" || fail "frames of dbg left unnamed: $(grep -E '^(dbg|\[dbg)' "$d/named.txt")"
find "$d/cache" -path "*$bid*" -name debuginfo | grep . >/dev/null || fail "no debug file in the cache"
# the report's rows too: the hot function by name
"${run[@]}" "$analyze" report -s sym --csv "$d/t.prec" | grep ',dbg_mix' >/dev/null || fail "report does not name dbg_mix"

kill "$server"
wait "$server" 2>/dev/null || true
rows >"$d/cached.txt"
cmp -s "$d/named.txt" "$d/cached.txt" || fail "with the server stopped, the cache names less"
echo "PASS"
