#!/usr/bin/env bash
# test_stream_e2e.sh - `perfrec record --to` into `perfrec collect` on
# loopback, with a real recording: the collector is killed (-9) mid-stream
# and restarted on the same directory, while hostile clients (random
# bytes, an oversized length, a path-traversal host, a wrong token, 40
# idle connections) are refused or timed out. The archive must equal the
# recorder's local -o copy byte for byte and verify whole.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_stream_e2e stream
pingpong=$build/tests/pingpong
kt_on_fail() { echo "--- collector log"; cat "$d"/coll*.log || true; }
kt_need_perf

echo "s3cret-token-$$" > "$d/token"
chmod 600 "$d/token"

port=$(free_ports 1)

start_collector() {
  "$perfrec" collect --listen "127.0.0.1:$port" --dir "$d/arch" --token-file "$d/token" \
    --hello-timeout 2s 2>>"$d/coll$1.log" &
  cpid=$!
  pids+=("$cpid")
  for _ in $(seq 100); do
    grep -q "listening on" "$d/coll$1.log" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "collector $1 did not start"
}
start_collector 1

# --- hostile clients, in the background for the whole run
cat > "$d/bad.py" <<'EOF'
import os, socket, struct, sys, time
port, kind, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def varint(v):
    b = bytearray()
    while v >= 0x80:
        b.append((v & 0x7f) | 0x80); v >>= 7
    b.append(v); return bytes(b)
def field(n, payload):          # length-delimited field n
    return varint(n << 3 | 2) + varint(len(payload)) + payload
def hello(host, session, token):
    h = varint(1 << 3) + varint(1) + field(2, host) + field(4, session) + field(6, token)
    m = field(1, h)
    return struct.pack(">I", len(m)) + m
def talk(payload, wait=5.0):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(wait)
    got = b""
    try:
        if payload: s.sendall(payload)
        while True:
            r = s.recv(4096)
            if not r: break
            got += r
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return got
res = []
if kind == "random":
    res.append(talk(os.urandom(4096)))
elif kind == "oversized":
    res.append(talk(b"\xff\xff\xff\xf0" + b"x" * 100))
elif kind == "traversal":
    res.append(talk(hello(b"../../../tmp/evil", b"x", open(sys.argv[4], "rb").read().strip())))
elif kind == "token":
    res.append(talk(hello(b"h", b"badtoken", b"wrong")))
elif kind == "idle":
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
    t0 = time.time(); closed = 0
    for s in socks:
        s.settimeout(max(0.1, 8 - (time.time() - t0)))
        try:
            while s.recv(4096): pass
            closed += 1
        except socket.timeout:
            pass
        s.close()
    res.append(b"closed %d" % closed)
open(out, "wb").write(b"\n".join(res))
EOF
bad_pids=()
for k in random oversized traversal token idle; do
  python3 "$d/bad.py" "$port" "$k" "$d/bad-$k.out" "$d/token" &
  pids+=("$!")
  bad_pids+=("$!")
done

# --- the good recorder: system-wide, with switch events, over a busy
# pipe ping-pong
"$pingpong" 100000000 10 >/dev/null &
pp=$!
pids+=("$pp")
"$perfrec" record -a -g --switch-events -d 6 -o "$d/local.prec" --to "127.0.0.1:$port" \
  --token-file "$d/token" --host testhost --session good --finish-timeout 60s \
  2>"$d/rec.err" &
rpid=$!
pids+=("$rpid")
sleep 2.5
kill -9 "$cpid"
wait "$cpid" 2>/dev/null || true
sleep 1
start_collector 2
code=0
wait "$rpid" || code=$?
cat "$d/rec.err" >&2
[ "$code" = 0 ] || fail "recorder exited $code"
grep -q "streamed to 127.0.0.1:$port as good" "$d/rec.err" || fail "no stream summary"
grep -q " 0 dropped" "$d/rec.err" || fail "frames dropped"
kill "$pp" 2>/dev/null || true
for p in "${bad_pids[@]}"; do wait "$p" || fail "a hostile client script failed"; done

arch="$d/arch/testhost/good.prec"
[ -f "$arch" ] || fail "no archive $arch"
cmp "$d/local.prec" "$arch" || fail "archive differs from the local copy"
"$analyze" verify "$arch" >/dev/null || fail "archive does not verify"
"$perfrec" collect --list "$d/arch" | tee "$d/list.out"
grep -E '^testhost +good .* complete' "$d/list.out" >/dev/null || fail "list does not show good as complete"

# --- the hostile clients were refused or timed out
grep -q "bad host name" "$d/coll1.log" "$d/coll2.log" || fail "traversal not refused"
grep -q "bad token" "$d/coll1.log" "$d/coll2.log" || fail "wrong token not refused"
grep -q "larger than any hello" "$d/coll1.log" "$d/coll2.log" || fail "oversized length not refused"
grep -q "bad host name" "$d/bad-traversal.out" || fail "traversal client got no reason"
grep -q "bad token" "$d/bad-token.out" || fail "token client got no reason"
closed=$(sed -n 's/^closed \([0-9]*\)/\1/p' "$d/bad-idle.out")
[ "${closed:-0}" -ge 40 ] || fail "only ${closed:-0} of 40 idle connections were closed"
[ ! -e /tmp/evil ] && [ ! -e "$d/tmp" ] || fail "a file escaped the archive directory"
find "$d/arch" -type f | grep -v -e '/testhost/good.prec$' -e '/testhost/.good.origin$' &&
  fail "unexpected files in the archive"
# the recording that owns the file, named beside it
grep -qxE '[0-9a-f]{32}' "$d/arch/testhost/.good.origin" || fail "no stream id beside the archive"
echo "test_stream_e2e: archive == local copy ($(stat -c %s "$arch") bytes), verified; hostile clients refused"
