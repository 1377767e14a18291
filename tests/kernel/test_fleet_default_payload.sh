#!/usr/bin/env bash
# test_fleet_default_payload.sh - the fleet path on NATS servers as most
# deployments run them: a 3-node `nats-server -js` cluster at its default
# max_payload (1 MiB), one `collect --nats`, one `archive`, and a recorder
# run as the README shows (no --frame-size): the collector's Welcome tells
# the recorder the largest frame it can forward, the recorder cuts its
# frames to fit, and the archived file equals the local copy byte for
# byte. A recorder given an explicit --frame-size above that limit is
# refused at its hello, and that refusal ends its streaming at once.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_fleet_default_payload fleetdef
pingpong=$build/tests/pingpong
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
kt_on_exit() { nats_cluster_stop 2>/dev/null; }
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/rec*.err; }
kt_need_nats
kt_need_perf

NATS_DEFAULT_PAYLOAD=1 nats_cluster_start "$d/nats" || fail "the NATS cluster did not start"
grep -q "max_payload" "$d"/nats/n1.conf && fail "the servers' config sets max_payload"
port=$(nats_free_ports 1)
"$perfrec" collect --listen "127.0.0.1:$port" --nats "$NATS_URLS" 2>"$d/coll.log" &
pids+=("$!")
for _ in $(seq 600); do
  grep -q "listening on" "$d/coll.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "listening on" "$d/coll.log" || fail "the collector did not listen within 60 s"
"$perfrec" archive --nats "$NATS_URLS" --dir "$d/arch" 2>"$d/archive.log" &
pids+=("$!")

"$pingpong" 100000000 10 >/dev/null &
pids+=("$!")

# --- the README's command: frames cut to what the servers take
step "recording, frame size not given"
code=0
"$perfrec" record -a --switch-events -d 6 --to "127.0.0.1:$port" -o "$d/local.prec" \
  --host host1 --session plain 2>"$d/rec1.err" || code=$?
cat "$d/rec1.err" >&2
[ "$code" = 0 ] || fail "the recorder exited $code"
grep -q "refused" "$d/coll.log" && fail "the collector refused a connection"
grep -q " 0 dropped" "$d/rec1.err" || fail "frames dropped"
# every record of the file (frame info + data frame, SPEC.md section 4)
# fits one NATS message, and the frames were cut near the limit
read -r max raw < <(python3 - "$d/local.prec" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
pos, big, raw = 0, 0, 0
while pos + 8 <= len(b):
    magic, size = struct.unpack_from("<II", b, pos)
    n = 8 + size
    if magic == 0x184D2A51:                       # frame info: its data frame follows
        csize, rsize = struct.unpack_from("<II", b, pos + 8 + 24)
        n += csize
        raw = max(raw, rsize)
    big = max(big, n)
    pos += n
print(big, raw)
EOF
)
step "largest record: $max bytes, largest frame: $raw bytes before compression"
[ "$max" -lt $((1 << 20)) ] || fail "a record of $max bytes cannot be one NATS message"
grep -q "frames of 983040 bytes (the largest the collector forwards)" "$d/rec1.err" ||
  fail "the recorder did not take the collector's limit"

for _ in $(seq 300); do
  "$perfrec" archive --list "$d/arch" 2>/dev/null | grep ' complete$' >/dev/null && break
  sleep 0.2
done
"$perfrec" archive --list "$d/arch" | tee "$d/list.out"
f="$d/arch/host1/plain.prec"
[ -f "$f" ] || fail "no archive $f"
cmp "$d/local.prec" "$f" || fail "the archive differs from the local copy"
"$analyze" verify "$f" >/dev/null || fail "the archive does not verify"

# --- an explicit --frame-size above the limit: refused as before, at once
step "recording with --frame-size 1m"
t0=$(date +%s.%N)
code=0
"$perfrec" record -a -d 4 --frame-size 1m --to "127.0.0.1:$port" -o "$d/big.prec" \
  --host host1 --session big 2>"$d/rec2.err" &
rpid=$!
pids+=("$rpid")
ended=""
for _ in $(seq 60); do
  if grep -q "streaming to 127.0.0.1:$port ended" "$d/rec2.err"; then
    ended=$(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }")
    break
  fi
  sleep 0.05
done
wait "$rpid" || code=$?
cat "$d/rec2.err" >&2
[ -n "$ended" ] || fail "streaming with --frame-size 1m did not end within 3 s"
step "streaming ended after ${ended}s, exit $code"
awk "BEGIN { exit !($ended < 2.0) }" || fail "streaming ended after ${ended}s"
[ "$code" != 0 ] || fail "the recorder exited 0 with its stream refused"
grep -q "do not fit the NATS servers' max_payload" "$d/rec2.err" ||
  fail "the refusal does not name max_payload"
"$analyze" verify "$d/big.prec" >/dev/null || fail "the local file does not verify"
n=$(grep -c "do not fit" "$d/coll.log" || true)
[ "$n" = 1 ] || fail "the collector refused $n connections of it, not 1"
echo "test_fleet_default_payload: ok"
