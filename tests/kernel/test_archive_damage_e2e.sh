#!/usr/bin/env bash
# test_archive_damage_e2e.sh - disk damage in a live archive, then a
# collector restart: `perfrec record --to` streams a real recording into
# `perfrec collect` on loopback; once the archive holds a dozen records,
# one byte of an acknowledged record's frame info is flipped on disk (the
# recorder has freed that record) and the collector is restarted, so the
# session reconnects and is resumed from the damaged file. The collector
# must keep every acknowledged record (the archive equals the recorder's
# -o copy but for the flipped byte), log the damage by offset, and the
# recorder must finish, not loop on "out of order".
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_archive_damage_e2e damage
kt_on_fail() { kt_tail_logs "$d"/coll*.log "$d/rec.err"; }
kt_need_perf

port=$(free_ports 1)

start_collector() {
  "$perfrec" collect --listen "127.0.0.1:$port" --dir "$d/arch" 2>>"$d/coll$1.log" &
  cpid=$!
  pids+=("$cpid")
  for _ in $(seq 200); do
    grep -q "listening on" "$d/coll$1.log" 2>/dev/null && return 0
    kill -0 "$cpid" 2>/dev/null || break
    sleep 0.05
  done
  fail "collector $1 did not start"
}

# records of a .prec file: "count offset-of-record-1 offset-of-record-2 ..."
cat > "$d/records.py" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
offs, pos = [], 0
while pos + 8 <= len(b):
    magic, size = struct.unpack_from("<II", b, pos)
    if magic & 0xFFFFFFF0 != 0x184D2A50:
        break
    n = 8 + size
    if magic & 0xF == 1:
        if pos + 8 + 28 > len(b):
            break
        n += struct.unpack_from("<I", b, pos + 8 + 24)[0]   # csize
    if pos + n > len(b):
        break
    offs.append(pos)
    pos += n
print(len(offs), *offs)
EOF
records() { python3 "$d/records.py" "$1"; }

start_collector 1
"$perfrec" record -a -e cpu-clock --flush-ms 100 -d 5 -o "$d/local.prec" \
  --to "127.0.0.1:$port" --host th --session s --finish-timeout 20s 2>"$d/rec.err" &
rpid=$!
pids+=("$rpid")

arch="$d/arch/th/s.prec"
n=0
for _ in $(seq 300); do
  [ -f "$arch" ] && n=$(records "$arch" | cut -d' ' -f1)
  [ "$n" -ge 12 ] && break
  sleep 0.05
done
[ "$n" -ge 12 ] || fail "the archive holds only $n records after 15 s"

# record 4's frame info (recs[0] is the count), a byte of its t_min:
# acknowledged long ago
read -r -a recs < <(records "$arch")
at=$(( recs[4] + 8 + 8 + 3 ))
python3 - "$arch" "$at" <<'EOF'
import sys
path, at = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ 0x40]))
EOF
held=$(records "$arch" | cut -d' ' -f1)

# the session reconnects to a restarted collector, which resumes the file
kill -TERM "$cpid"
wait "$cpid" 2>/dev/null || true
start_collector 2

# the recorder finishes (recording 5 s, then its last acks) or it loops
code=
for _ in $(seq 1200); do
  if ! kill -0 "$rpid" 2>/dev/null; then
    code=0
    wait "$rpid" || code=$?
    break
  fi
  sleep 0.05
done
[ -n "$code" ] || fail "the recorder still runs 60 s later (looping on a resume point it cannot serve)"
[ "$code" = 0 ] || fail "recorder exited $code"
grep -q "out of order" "$d/coll2.log" && fail "the collector saw frames out of order"
grep -q "streamed to 127.0.0.1:$port as s" "$d/rec.err" || fail "no stream summary"

# every acknowledged record kept: the archive is the local copy but the byte
grep -q "cut " "$d/coll2.log" && fail "the collector cut the archive"
grep -q "$arch: damaged bytes at offset ${recs[4]} " "$d/coll2.log" ||
  fail "no warning naming the damaged record at offset ${recs[4]}"
python3 - "$d/local.prec" "$arch" "$at" <<'EOF' || fail "the archive differs from the local copy"
import sys
a, b, at = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), int(sys.argv[3])
diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
print("local %d bytes, archive %d bytes, differing offsets %s" % (len(a), len(b), diff[:8]))
sys.exit(0 if len(a) == len(b) and diff == [at] else 1)
EOF
"$perfrec" collect --list "$d/arch" | tee "$d/list.out"
grep -E '^th +s .* damaged \(1 damaged stretch, the first at offset [0-9]+; index in\)' \
  "$d/list.out" >/dev/null || fail "list does not show the archive as damaged and complete"
total=$(records "$arch" | cut -d' ' -f1)
kill -TERM "$cpid"
wait "$cpid" 2>/dev/null || true
echo "test_archive_damage_e2e: $held acknowledged records held when record 4 was damaged; 0 cut;" \
  "the archive ($total records) equals the local copy but the flipped byte at $at"
