#!/usr/bin/env bash
# test_daemon_e2e.sh - `perfrec daemon` and `perfrec ctl` on a temp socket
# with real events:
#   - a session from a session file (cpu-clock + switch events) and one
#     from ctl (a tracepoint, flight recorder): status shows both, counts
#     growing;
#   - rotate twice: three files that each verify and analyze alone, whose
#     time ranges join end to start and whose switch counts add up to what
#     the session counted in all (no record lost or doubled); the three
#     concatenated (`cat`) verify whole as 3 parts, with the files' packets
#     and the session's switches;
#   - a snapshot of the flight session analyzes alone while it goes on;
#   - another uid is refused (by the socket's mode, and by the peer
#     credentials check when the mode is opened up); garbage bytes, an
#     oversized length, unknown fields and a silent client get error
#     replies while the sessions keep recording;
#   - an unsupported event (cycles in a VM) returns the recorder's own
#     message; a session killed -9 is restarted; one daemon per socket;
#     SIGTERM finishes every file with its index; after a daemon's kill -9
#     its sessions finish their files and the stale socket is replaced.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
# pids are killed -9 at exit: the session processes of a daemon killed
# there end by their parent-death signal
kt_begin test_daemon_e2e daemon
sock=$d/run/ctl.sock
kt_on_fail() { echo "--- daemon log"; cat "$d"/daemon*.log || true; }
kt_need_perf

ctl() { "$perfrec" ctl --socket "$sock" "$@"; }
status_json() { ctl --json status "$1" > "$d/st-$1.json" || fail "status $1: $(cat "$d/st-$1.json")"; }
field() { status_json "$1"; json "$d/st-$1.json" "r['sessions'][0]['$2']"; }

mkdir -p "$d/conf" "$d/out"
cat > "$d/conf/sw.session" <<'EOF'
# system-wide cpu-clock with context switches, files rotated on request
-a -e cpu-clock -F 999
--switch-events
-o sw.prec
EOF

start_daemon() {   # start_daemon LOGNAME
  NOTIFY_SOCKET=${notify:-} "$perfrec" daemon --foreground --socket "$sock" --config "$d/conf" --output-dir "$d/out" \
    2>>"$d/$1" &
  dpid=$!
  pids+=("$dpid")
  for _ in $(seq 100); do
    grep -q "serving on" "$d/$1" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "daemon did not start"
}
# what the daemon tells systemd (sd_notify datagrams), as systemd would see it
notify=$d/notify.sock
python3 - "$notify" "$d/notify.out" <<'EOF2' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(120)
got = []
try:
    while "STOPPING=1" not in got:
        got.append(s.recv(4096).decode()); open(sys.argv[2], "w").write("\n".join(got) + "\n")
except socket.timeout:
    pass
EOF2
pids+=("$!")
for _ in $(seq 200); do [ -S "$notify" ] && break; sleep 0.05; done
[ -S "$notify" ] || fail "the notify socket listener did not start within 10 s"
start_daemon daemon1.log
notify=
step "daemon up (pid $dpid)"

# a steady workload: context switches and page faults on both CPUs (a
# few thousand switches a second, so the files stay quick to analyze)
( while :; do head -c 300000 /dev/zero | cat > /dev/null; sleep 0.005; done ) &
pids+=("$!")

# --- a silent client (timed out with an error) and a flood of clients,
# in the background while the rest runs
cat > "$d/raw.py" <<'EOF'
import socket, struct, sys, time
path, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
def varint(v):
    b = bytearray()
    while v >= 0x80:
        b.append((v & 0x7f) | 0x80); v >>= 7
    b.append(v); return bytes(b)
def field(n, payload): return varint(n << 3 | 2) + varint(len(payload)) + payload
def frame(m): return struct.pack(">I", len(m)) + m
def reply(sock, wait):
    sock.settimeout(wait)
    got = b""
    try:
        while True:
            r = sock.recv(65536)
            if not r: break
            got += r
            if len(got) >= 4 and len(got) >= 4 + struct.unpack(">I", got[:4])[0]: break
    except socket.timeout:
        pass
    if len(got) < 4: return None
    m, pos, ok, err = got[4:4 + struct.unpack(">I", got[:4])[0]], 0, False, ""
    while pos < len(m):          # Reply: 1 ok (varint), 2 error (string)
        key = m[pos]; pos += 1
        if key & 7 == 0:
            v, s = 0, 0
            while True:
                b = m[pos]; pos += 1; v |= (b & 0x7f) << s; s += 7
                if b < 0x80: break
            if key >> 3 == 1: ok = bool(v)
        elif key & 7 == 2:
            n, s = 0, 0
            while True:
                b = m[pos]; pos += 1; n |= (b & 0x7f) << s; s += 7
                if b < 0x80: break
            if key >> 3 == 2: err = m[pos:pos + n].decode()
            pos += n
        else:
            break
    return "ok" if ok else "error: " + err
def talk(payload, wait=10.0):
    s = socket.socket(socket.AF_UNIX); s.connect(path)
    t = time.time()
    if payload: s.sendall(payload)
    r = reply(s, wait); s.close()
    return "%s (%.1fs)" % (r, time.time() - t)
status_req = field(4, b"")                          # Request.status = {}
if kind == "garbage":
    res = talk(frame(b"\xff" * 40))
elif kind == "oversized":
    res = talk(b"\x7f\xff\xff\xff" + b"x" * 100)
elif kind == "unknown":
    res = talk(frame(varint(1 << 3) + varint(1) + status_req + varint(99 << 3) + varint(7)))
elif kind == "unknown-nested":
    res = talk(frame(varint(1 << 3) + varint(1) + field(4, varint(9 << 3) + varint(1))))
elif kind == "newkind":
    res = talk(frame(varint(1 << 3) + varint(1) + field(12, b"")))
elif kind == "noversion":
    res = talk(frame(status_req))
elif kind == "silent":
    res = talk(b"", wait=15.0)
elif kind == "truncated":                           # 100 bytes announced, 10 sent
    res = talk(struct.pack(">I", 100) + status_req * 5, wait=15.0)
elif kind == "good":
    res = talk(frame(varint(1 << 3) + varint(1) + status_req))
open(out, "w").write(res + "\n")
EOF
python3 "$d/raw.py" "$sock" silent "$d/raw-silent.out" &
silent=$!
pids+=("$silent")
python3 "$d/raw.py" "$sock" truncated "$d/raw-truncated.out" &
truncated=$!
pids+=("$truncated")

# --- two sessions, different events: sw (the file) and fl (ctl, flight)
ctl start fl -a -e sched:sched_switch -c 1 --flight 192k --frame-size 16k > "$d/start-fl.out" \
  2>&1 || fail "start fl: $(cat "$d/start-fl.out")"
for _ in $(seq 100); do
  [ "$(field sw state 2>/dev/null)" = RUNNING ] && break
  sleep 0.05
done
[ "$(field sw state)" = RUNNING ] || fail "session sw (session file) is not running"
step "sessions sw (file) and fl (ctl, flight) running"
sleep 1
r1=$(field sw records); f1=$(field fl records)
ctl status > "$d/status.txt" || fail "status"
grep -q "session sw: running" "$d/status.txt" && grep -q "session fl: running" "$d/status.txt" ||
  fail "status does not show both sessions: $(cat "$d/status.txt")"
grep -q "events   cpu-clock" "$d/status.txt" && grep -q "events   sched:sched_switch" "$d/status.txt" ||
  fail "status does not show each session's events"
sleep 1
r2=$(field sw records); f2=$(field fl records)
[ "$r2" -gt "$r1" ] && [ "$f2" -gt "$f1" ] || fail "counts do not grow: sw $r1 -> $r2, fl $f1 -> $f2"
step "status: both growing (sw $r1 -> $r2, fl $f1 -> $f2 records)"

# --- several clients at once
many=()
for i in 1 2 3 4 5 6; do ctl --json list > "$d/list$i.json" & many+=("$!"); done
for j in "${many[@]}"; do wait "$j" || fail "a concurrent client failed"; done
for i in 1 2 3 4 5 6; do [ "$(json "$d/list$i.json" "len(r['sessions'])")" = 2 ] || fail "list $i"; done

# --- rotation: three files, each alone, together one recording
ctl rotate sw > "$d/rot1.out" || fail "rotate 1: $(cat "$d/rot1.out")"
sleep 1
ctl rotate sw > "$d/rot2.out" || fail "rotate 2: $(cat "$d/rot2.out")"
sleep 1
ctl --json stop sw > "$d/stop-sw.json" || fail "stop sw: $(cat "$d/stop-sw.json")"
[ "$(json "$d/stop-sw.json" "r['sessions'][0]['state']")" = STOPPED ] || fail "sw not stopped"
total=$(json "$d/stop-sw.json" "r['sessions'][0]['switches']")
files=$(ls "$d"/out/sw.*.prec)
[ "$(echo "$files" | wc -l)" = 3 ] || fail "expected 3 files of sw, got: $files"
sum=0; prev_end=""
for f in $files; do
  "$analyze" verify "$f" > "$d/verify.out" || fail "$f does not verify: $(cat "$d/verify.out")"
  "$analyze" sched "$f" > /dev/null || fail "sched on $f"
  "$analyze" info --json "$f" > "$d/info.json" || fail "info on $f"
  n=$(json "$d/info.json" "r['info']['switches']")
  start=$(json "$d/info.json" "r['info']['start_s']")
  end=$(json "$d/info.json" "r['info']['start_s'] + r['info']['duration_s']")
  [ "$n" -gt 0 ] || fail "$f holds no switches"
  if [ -n "$prev_end" ]; then
    python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(abs(a-b) > 1e-6)" \
      "$prev_end" "$start" || fail "$f starts at $start, the previous file ended at $prev_end"
  fi
  prev_end=$end
  sum=$((sum + n))
  echo "  $(basename "$f"): $n switches, $start .. $end s"
done
[ "$sum" = "$total" ] || fail "the files hold $sum switches, the session counted $total"
step "rotate: 3 files verify alone, join end to start, $sum switches = session total $total"

# --- the rotations concatenated: one whole file of 3 parts, each frame once
cat $files > "$d/cat.prec"
"$analyze" verify --csv "$d/cat.prec" > "$d/verify-cat.csv" || fail "cat of the rotations does not verify: $(cat "$d/verify-cat.csv")"
grep -qx 'parts,3' "$d/verify-cat.csv" || fail "cat of 3 files: $(cat "$d/verify-cat.csv")"
want=0
for f in $files; do
  want=$((want + $("$analyze" verify --csv "$f" | sed -n 's/^packets,//p')))
done
got=$(sed -n 's/^packets,//p' "$d/verify-cat.csv")
[ "$got" = "$want" ] || fail "cat of the rotations: $got packets, the files hold $want"
"$analyze" info --json "$d/cat.prec" > "$d/info-cat.json" || fail "info on the cat"
n=$(json "$d/info-cat.json" "r['info']['switches']")
[ "$n" = "$total" ] || fail "cat of the rotations: $n switches, the session counted $total"
step "cat of the rotations: whole, 3 parts, $got packets and $n switches as the files"

# --- flight snapshot: analyzes alone, the session goes on
before=$(field fl records)
ctl snapshot fl -o snap.prec > "$d/snap.out" || fail "snapshot: $(cat "$d/snap.out")"
snap=$d/out/snap.prec
[ -f "$snap" ] || fail "no snapshot file $snap"
"$analyze" verify "$snap" > "$d/verify.out" || fail "snapshot does not verify: $(cat "$d/verify.out")"
"$analyze" info --json "$snap" > "$d/info.json" || fail "info on the snapshot"
[ "$(json "$d/info.json" "r['info']['samples']")" -gt 0 ] || fail "the snapshot holds no samples"
"$analyze" report "$snap" > /dev/null || fail "report on the snapshot"
dropped=$(json "$d/st-fl.json" "r['sessions'][0]['flight']['dropped_frames']")
if [ "$dropped" -gt 0 ]; then
  "$analyze" dump "$snap" > "$d/snap.dump"
  grep -q "loss what=flight_dropped" "$d/snap.dump" || fail "no flight_dropped loss in the snapshot"
fi
# (status reports what the session's process last pushed: every 0.5 s)
for _ in $(seq 100); do
  after=$(field fl records)
  [ "$after" -gt "$before" ] && break
  sleep 0.1
done
[ "$(field fl state)" = RUNNING ] && [ "$after" -gt "$before" ] || fail "fl did not go on after the snapshot"
ctl snapshot fl -o snap.prec > "$d/snap2.out" 2>&1 && fail "a snapshot overwrote a file"
grep -q "never overwrites" "$d/snap2.out" || fail "no reason for refusing to overwrite: $(cat "$d/snap2.out")"
ctl start stdout -a -o - > "$d/stdout.out" 2>&1 && fail "a session was started on -o - (the daemon has no standard output)"
grep -q "no standard output" "$d/stdout.out" || fail "no reason for refusing -o -: $(cat "$d/stdout.out")"
[ -e "$d/out/-" ] && fail "the daemon made a file named '-'"
step "snapshot: verifies and analyzes alone ($dropped older frames dropped before it); fl goes on ($before -> $after)"

# --- another uid: refused by the socket's mode, then by its credentials
setpriv --reuid=nobody --regid=nogroup --clear-groups "$perfrec" ctl --socket "$sock" list \
  > "$d/nobody.out" 2>&1 && fail "nobody was served"
grep -q "Permission denied" "$d/nobody.out" || fail "nobody: $(cat "$d/nobody.out")"
chmod 0711 "$d" "$d/run"
chmod 0666 "$sock"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$perfrec" ctl --socket "$sock" list \
  > "$d/nobody.out" 2>&1 && fail "nobody was served through an open socket"
grep -q "permission denied: uid 65534 is not root" "$d/nobody.out" || fail "nobody: $(cat "$d/nobody.out")"
chmod 0600 "$sock"
chmod 0700 "$d"
step "another uid refused (socket mode; peer credentials)"

# --- bad requests get error replies; the sessions go on
ctl start sw2 -a -e cpu-clock -F 500 -o sw2.prec > /dev/null || fail "start sw2"
b1=$(field sw2 records); c1=$(field fl records)
for k in garbage oversized unknown unknown-nested newkind noversion good; do
  python3 "$d/raw.py" "$sock" "$k" "$d/raw-$k.out" || fail "raw client $k"
  echo "  $k: $(cat "$d/raw-$k.out")"
done
grep -q "error: malformed request" "$d/raw-garbage.out" || fail "garbage: $(cat "$d/raw-garbage.out")"
grep -q "error: request too large" "$d/raw-oversized.out" || fail "oversized: $(cat "$d/raw-oversized.out")"
grep -q "error: unknown field 99 in Request" "$d/raw-unknown.out" || fail "unknown: $(cat "$d/raw-unknown.out")"
grep -q "error: unknown field 9 in StatusRequest" "$d/raw-unknown-nested.out" || fail "nested unknown"
grep -q "error: unknown field 12 in Request" "$d/raw-newkind.out" || fail "new request kind"
grep -q "error: control protocol version 0" "$d/raw-noversion.out" || fail "no version"
grep -q "^ok" "$d/raw-good.out" || fail "a good raw request: $(cat "$d/raw-good.out")"
for _ in $(seq 100); do
  b2=$(field sw2 records); c2=$(field fl records)
  [ "$b2" -gt "$b1" ] && [ "$c2" -gt "$c1" ] && break
  sleep 0.1
done
[ "$b2" -gt "$b1" ] && [ "$c2" -gt "$c1" ] || fail "sessions stalled after bad requests: $b1 -> $b2, $c1 -> $c2"
wait "$silent" "$truncated" || true
grep -q "error: no whole request within" "$d/raw-silent.out" || fail "silent client: $(cat "$d/raw-silent.out")"
grep -q "error: no whole request within" "$d/raw-truncated.out" || fail "truncated: $(cat "$d/raw-truncated.out")"
step "bad requests: error replies, sessions went on; silent client timed out: $(cat "$d/raw-silent.out")"

# --- the recorder's own error comes back verbatim
ctl start hw -a -e cycles > "$d/cycles.out" 2>&1 && fail "cycles started in a VM?"
grep -q "cycles: not supported on this host" "$d/cycles.out" || fail "cycles: $(cat "$d/cycles.out")"
ctl status hw > /dev/null 2>&1 && fail "a session that could not start is listed"
ctl start bad -a -e no-such-event > "$d/bad.out" 2>&1 && fail "a bad event started"
ctl start cmd -a -- /bin/true > "$d/cmd.out" 2>&1 && fail "a session ran a command"
grep -q "does not run a command" "$d/cmd.out" || fail "command: $(cat "$d/cmd.out")"
step "unsupported event: $(tail -1 "$d/cycles.out")"

# --- a session killed -9 is restarted; the others go on
victim=$(field sw2 pid)
kill -9 "$victim"
for _ in $(seq 100); do
  st=$(field sw2 state); rs=$(field sw2 restarts)
  [ "$st" = RUNNING ] && [ "$rs" -ge 1 ] && break
  sleep 0.1
done
[ "$st" = RUNNING ] && [ "$rs" -ge 1 ] || fail "sw2 not restarted after kill -9 (state $st, restarts $rs)"
[ "$(field sw2 pid)" != "$victim" ] || fail "sw2 has the killed pid"
[ "$(field fl state)" = RUNNING ] || fail "fl affected by sw2's crash"
ls "$d"/out/sw2.*.prec | head -1 | xargs "$analyze" info > /dev/null || fail "the killed run's file does not read"
step "kill -9 of a session: restarted (restarts $rs), others unaffected"

# --- session files: a new one starts, a changed one restarts with its new
# words, a bad one is shown invalid, a removed one stops
printf -- '-a -e page-faults -c 100 -o pf.prec\n' > "$d/conf/pf.session"
printf -- '-a -e\n' > "$d/conf/bad.session"
for _ in $(seq 60); do [ "$(field pf state 2>/dev/null)" = RUNNING ] && break; sleep 0.1; done
[ "$(field pf state)" = RUNNING ] || fail "new session file pf not started"
[ "$(field bad state)" = INVALID ] || fail "bad.session not invalid: $(cat "$d/st-bad.json")"
grep -q "needs a value" "$d/st-bad.json" || fail "bad.session: no reason"
pfpid=$(field pf pid)
printf -- '-a -e page-faults -c 50 -o pf.prec\n' > "$d/conf/pf.session.new"
mv "$d/conf/pf.session.new" "$d/conf/pf.session"
for _ in $(seq 60); do
  [ "$(field pf state 2>/dev/null)" = RUNNING ] && [ "$(field pf pid)" != "$pfpid" ] && break
  sleep 0.1
done
json "$d/st-pf.json" "' '.join(r['sessions'][0]['args'])" | grep -q -- "-c 50" || fail "pf not restarted with its new words"
rm "$d/conf/pf.session" "$d/conf/bad.session"
for _ in $(seq 60); do ctl status pf > /dev/null 2>&1 || break; sleep 0.1; done
ctl status pf > /dev/null 2>&1 && fail "pf still there after its file went"
for f in "$d"/out/pf.*.prec; do "$analyze" verify "$f" > /dev/null || fail "$f not finished"; done
step "session files: started, restarted on change, invalid shown, stopped on removal"

# --- one daemon per socket
"$perfrec" daemon --foreground --socket "$sock" --config "$d/conf" --output-dir "$d/out" \
  > "$d/second.out" 2>&1 && fail "a second daemon started"
grep -q "another perfrec daemon (pid $dpid)" "$d/second.out" || fail "second daemon: $(cat "$d/second.out")"

# --- SIGTERM: every session stops cleanly, files finished with their index
kill -TERM "$dpid"
code=0; wait "$dpid" || code=$?
[ "$code" = 0 ] || fail "daemon exited $code on SIGTERM"
[ ! -e "$sock" ] || fail "socket left behind"
last=$(ls "$d"/out/sw2.*.prec | tail -1)
"$analyze" verify "$last" > "$d/verify.out" || fail "$last not finished by SIGTERM: $(cat "$d/verify.out")"
grep -q "session fl: ended" "$d/daemon1.log" && grep -q "session sw2: ended" "$d/daemon1.log" ||
  fail "sessions not reported ended"
step "SIGTERM: daemon exit 0, socket removed, $(basename "$last") verifies"

# --- kill -9 of the daemon: its sessions finish their files, the stale
# socket is replaced by the next daemon
start_daemon daemon2.log
for _ in $(seq 100); do [ "$(field sw state 2>/dev/null)" = RUNNING ] && break; sleep 0.05; done
swpid=$(field sw pid)
sleep 0.5
{ kill -9 "$dpid"; wait "$dpid"; } 2>/dev/null || true
# (it finishes its file first: a final drain and the symbol tables of a
# system-wide session, under ASan on a loaded machine)
for _ in $(seq 600); do kill -0 "$swpid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$swpid" 2>/dev/null && fail "session sw outlived its daemon by 30 s"
[ -S "$sock" ] || fail "no stale socket to replace"
last=$(ls -t "$d"/out/sw.*.prec | head -1)
"$analyze" verify "$last" > "$d/verify.out" || fail "$last not finished after the daemon died: $(cat "$d/verify.out")"
printf 'group nogroup   # members may use ctl\n' > "$d/conf/daemon.conf"
start_daemon daemon3.log
grep -q "replacing the stale socket" "$d/daemon3.log" || fail "stale socket not replaced"
ctl list > /dev/null || fail "third daemon does not answer"
[ "$(stat -c %a:%G "$sock")" = 660:nogroup ] || fail "socket with a group: $(stat -c %a:%G "$sock")"
chmod 0711 "$d"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$perfrec" ctl --socket "$sock" list \
  > "$d/nobody.out" 2>&1 || fail "a member of the socket's group was refused: $(cat "$d/nobody.out")"
chmod 0700 "$d"
grep -q "READY=1" "$d/notify.out" && grep -q "STOPPING=1" "$d/notify.out" ||
  fail "systemd was not told READY=1 and STOPPING=1: $(cat "$d/notify.out" 2>&1)"
kill -TERM "$dpid"; wait "$dpid" || fail "third daemon exit"
step "daemon kill -9: session finished $(basename "$last"); stale socket replaced; group socket; sd_notify"
echo "test_daemon_e2e: ok"
