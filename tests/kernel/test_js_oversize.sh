#!/usr/bin/env bash
# test_js_oversize.sh - a record larger than the NATS servers' max_payload.
# A recorder cuts a frame once it holds the frame size, so the packet that
# crossed it can carry a record past the room REC_WIRE_FRAME_ROOM leaves
# (a frame of packets that do not compress, one huge packet). JetStream
# cannot take such a record and no resend makes it smaller: the collector
# refuses it definitively, once, naming the record, the limit and the fix,
# so the recorder stops streaming at once and keeps its -o copy (before,
# the refusal was transient: the recorder reconnected and resent the same
# record until --finish-timeout, and nothing after it was archived).
# A server with max_payload 100 KB, and a client speaking the stream
# protocol (format/SPEC.md section 10) that sends a real recording's
# records, cut at 960 KiB, up to the first one above 100 KB.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_js_oversize jsbig
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/*.out; }
kt_need_nats
kt_need_perf

nport=$(nats_free_ports 1)
cat >"$d/nats.conf" <<CONF
listen: 127.0.0.1:$nport
max_payload: 100KB
jetstream { store_dir: "$d/store" }
CONF
nats-server -c "$d/nats.conf" >"$d/nats.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do grep -q "Server is ready" "$d/nats.log" && break; sleep 0.1; done
port=$(nats_free_ports 1)
"$perfrec" collect --listen "127.0.0.1:$port" --nats "nats://127.0.0.1:$nport" --replicas 1 \
  2>"$d/coll.log" &
pids+=("$!")
for _ in $(seq 300); do grep -q "listening on" "$d/coll.log" 2>/dev/null && break; sleep 0.1; done
grep -q "listening on" "$d/coll.log" || fail "the collector did not listen"

step "a recording cut at 960 KiB or every 3 s, both CPUs busy"
"$build/tests/pingpong" 1000000000 0 0 500 >/dev/null &
pids+=("$!")
"$perfrec" record -a -g -F 4000 -d 4 --flush-ms 3000 --frame-size 960k -q -o "$d/src.prec" \
  2>"$d/src.err" || fail "the recording failed: $(cat "$d/src.err")"

step "its records streamed as they are"
python3 - "$port" "$d/src.prec" >"$d/client.out" <<'PY'
import os, socket, struct, sys

def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])

def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload

def msg(body_field, body):   # StreamMessage{body}, length-prefixed
    m = field(body_field, 2, body)
    return struct.pack(">I", len(m)) + m

def read_varint(b, pos):
    n = shift = 0
    while True:
        c = b[pos]
        pos += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, pos

def fields(b):
    pos, out = 0, {}
    while pos < len(b):
        key, pos = read_varint(b, pos)
        if key & 7 == 0:
            v, pos = read_varint(b, pos)
        else:
            n, pos = read_varint(b, pos)
            v, pos = b[pos:pos + n], pos + n
        out[key >> 3] = v
    return out

data = open(sys.argv[2], "rb").read()
recs, pos = [], 0
while pos + 8 <= len(data):
    magic, size = struct.unpack_from("<II", data, pos)
    n = 8 + size
    if magic == 0x184D2A51:           # frame info: its data frame follows
        n += struct.unpack_from("<I", data, pos + 8 + 24)[0]
    recs.append(data[pos:pos + n])
    pos += n
big = [i for i, r in enumerate(recs) if len(r) > 102400]
if not big:
    print("none above 100 KB: largest %d bytes" % max(len(r) for r in recs))
    sys.exit(0)
big = big[0]
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
# Hello: version 1, host, session, stream id, frame_bytes 960 KiB, adapts
hello = (field(1, 0, 1) + field(2, 2, b"h1") + field(4, 2, b"big") +
         field(9, 2, os.urandom(16)) + field(7, 0, 983040) + field(10, 0, 1))
s.sendall(msg(1, hello))
for seq in range(1, big + 2):
    try:
        s.sendall(msg(3, field(1, 0, seq) + field(2, 2, recs[seq - 1])))
    except OSError:
        break
s.settimeout(10)
buf = b""
while True:
    try:
        chunk = s.recv(65536)
    except (socket.timeout, OSError):
        break
    if not chunk:
        break
    buf += chunk
pos = 0
while pos + 4 <= len(buf):
    n = struct.unpack_from(">I", buf, pos)[0]
    m = fields(buf[pos + 4:pos + 4 + n])
    pos += 4 + n
    if 6 in m:
        r = fields(m[6])
        print("refusal definitive=%d record=%d bytes=%d reason=%s" %
              (r.get(3, 0), big + 1, len(recs[big]), r.get(1, b"").decode()))
PY
cat "$d/client.out"
grep -q "^none above" "$d/client.out" && skip "the recording has no record above 100 KB"
grep -q "^refusal " "$d/client.out" || fail "no refusal"
grep -q "^refusal definitive=1 " "$d/client.out" || fail "the refusal is not definitive"
read -r rec bytes < <(sed -n 's/.* record=\([0-9]*\) bytes=\([0-9]*\) .*/\1 \2/p' "$d/client.out")
grep -qF "reason=record $rec is $bytes bytes, above the NATS servers' max_payload of 102400 bytes: record with a smaller --frame-size, or raise the servers' max_payload" \
  "$d/client.out" || fail "the reason does not name the record, the limit and the fix"
n=$(grep -c "above the NATS servers' max_payload" "$d/coll.log" || true)
[ "$n" = 1 ] || fail "the collector refused $n times, not once"
echo "test_js_oversize: ok"
