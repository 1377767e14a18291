#!/usr/bin/env bash
# test_daemon_guard.sh - what a group member may not do to the daemon, and
# what a first use of ctl should get, against a real daemon on a temp
# socket (daemon.conf: group nogroup; the member is nobody:nogroup):
#   - a member's --keep never deletes another session's files: a start on
#     root's output stem (live session, stopped session, same name) is
#     refused naming root's session; a garbled manifest changes nothing;
#   - --keep deletes only what the session made: a file of its pattern it
#     did not make, and a symlink put in place of one it made, stay;
#   - 100 silent connections of a member do not lock ctl out (root's and
#     the member's own answer at once);
#   - session files with an unterminated quote, a NUL or over 64 KiB are
#     listed invalid with the reason;
#   - ctl takes its options after the command, names a wrong argument,
#     and stop names the file it finished.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_daemon_guard guard
sock=$d/run/ctl.sock
kt_on_fail() { echo "--- daemon log"; cat "$d"/daemon.log || true; }
kt_need_perf
command -v setpriv > /dev/null || fail "setpriv (util-linux) is needed to run a member"
getent group nogroup > /dev/null || fail "no group nogroup"

ctl() { "$perfrec" ctl --socket "$sock" "$@"; }
member() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$perfrec" ctl --socket "$sock" "$@"; }
# wait_for SECONDS COMMAND...: polls until COMMAND succeeds
wait_for() {
  local end=$(( $(date +%s) + $1 )); shift
  until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.1; done
}

mkdir -p "$d/conf" "$d/out"
chmod 0711 "$d"            # nobody reaches the socket, nothing else
printf 'group nogroup\n' > "$d/conf/daemon.conf"
"$perfrec" daemon --foreground --socket "$sock" --config "$d/conf" --output-dir "$d/out" \
  2>>"$d/daemon.log" &
dpid=$!
pids+=("$dpid")
wait_for 10 grep -q "serving on" "$d/daemon.log" || fail "daemon did not start"
[ "$(stat -c %a "$d/out/.manifests")" = 700 ] || fail "the manifests' directory is not 0700"

# --- root's session with three files
ctl start shared -a -e cpu-clock -F 99 -o shared.prec > "$d/o" 2>&1 || fail "start shared: $(cat "$d/o")"
ctl rotate shared > /dev/null || fail "rotate"
ctl rotate shared > /dev/null || fail "rotate"
root_files=$(ls "$d"/out/shared.*.prec)
[ "$(echo "$root_files" | wc -l)" = 3 ] || fail "root's session made: $root_files"
check_root_files() {
  for f in $root_files; do [ -f "$f" ] || fail "$1: root's $f was deleted"; done
}

# --- a member on root's stem: refused while root's session runs ...
member start evil -a -e cpu-clock -F 99 -o shared.prec --keep 1 > "$d/o" 2>&1 &&
  fail "a member started a session on root's running session's stem"
grep -q "session shared" "$d/o" || fail "refusal does not name session shared: $(cat "$d/o")"
check_root_files "live stem"
# ... once it stopped (its files are still on disk; its process gone) ...
ctl stop shared > "$d/stop.out" || fail "stop shared"
gone() { ctl --json status shared > "$d/st.json" && [ "$(json "$d/st.json" "r['sessions'][0].get('pid', 0)")" = 0 ]; }
wait_for 30 gone || fail "shared's process did not end: $(cat "$d/st.json")"
member start evil -a -e cpu-clock -F 99 -o shared.prec --keep 1 > "$d/o" 2>&1 &&
  fail "a member started a session on a stopped session's files"
grep -q "files of session shared" "$d/o" || fail "refusal does not name session shared: $(cat "$d/o")"
# ... and under root's session's own name
member start shared -a -e cpu-clock -F 99 -o shared.prec --keep 1 > "$d/o" 2>&1 &&
  fail "a member took over root's session name and its files"
grep -q "made by uid 0" "$d/o" || fail "refusal does not say whose files: $(cat "$d/o")"
check_root_files "stopped stem"
# two live sessions never share a stem, root's neither
ctl start one -a -e cpu-clock -F 99 -o same.prec > /dev/null 2>&1 || fail "start one"
ctl start two -a -e cpu-clock -F 99 -o ./same.prec > "$d/o" 2>&1 && fail "two sessions share a stem"
grep -q "session one" "$d/o" || fail "refusal does not name session one: $(cat "$d/o")"
ctl stop one > /dev/null
step "a member's start on root's files refused: $(tail -1 "$d/o")"

# --- a garbled manifest: the daemon cannot tell whose files those are,
# but the member's --keep still deletes only its own
head -c 300 /dev/urandom > "$d/out/.manifests/shared.manifest"
member start evil -a -e cpu-clock -F 99 -o shared.prec --keep 1 > "$d/o" 2>&1 ||
  fail "start evil (garbled manifest): $(cat "$d/o")"
member rotate evil > /dev/null || fail "rotate evil"
member rotate evil > /dev/null || fail "rotate evil"
check_root_files "garbled manifest"
[ "$(ls "$d"/out/shared.*.prec | wc -l)" = 4 ] || fail "evil kept: $(ls "$d"/out/shared.*.prec)"
member stop evil > /dev/null || fail "stop evil"
step "garbled manifest: root's 3 files stay, evil keeps its newest 1"

# --- --keep deletes only what it made: a file of its pattern put there by
# someone else stays, and so does a symlink put in place of one it made
member start mine -a -e cpu-clock -F 99 -o mine.prec --keep 2 > "$d/o" 2>&1 || fail "start mine: $(cat "$d/o")"
planted=$d/out/mine.20000101-000000.0001.prec
echo planted > "$planted"
first=$(ls "$d"/out/mine.2*.prec | grep -v 20000101 | head -1)
echo victim > "$d/victim"
rm "$first"; ln -s "$d/victim" "$first"
for _ in 1 2 3; do member rotate mine > /dev/null || fail "rotate mine"; done
[ -f "$planted" ] || fail "keep deleted a file its session did not make"
[ -L "$first" ] && [ "$(cat "$d/victim")" = victim ] || fail "keep deleted a symlink put in place of its file"
made=$(ls "$d"/out/mine.2*.prec | grep -v -e 20000101 -e "$(basename "$first")" | wc -l)
[ "$made" = 2 ] || fail "mine keeps $made of its own files, not 2: $(ls "$d"/out/mine.*)"
stop_out=$(member stop mine) || fail "stop mine"
finished=$(echo "$stop_out" | sed -n 's/^finished: //p')
[ -n "$finished" ] && [ -f "$finished" ] || fail "stop does not name the file it finished: $stop_out"
step "keep: planted file and symlink stay, 2 own files kept; stop says: finished: $(basename "$finished")"

# --- a flood of silent connections does not lock ctl out
cat > "$d/flood.py" <<'EOF2'
import socket, sys, time
conns = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); conns.append(s)
print(len(conns), flush=True)
time.sleep(30)
EOF2
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 "$d/flood.py" "$sock" 100 \
  > "$d/flood.ok" &
pids+=("$!")
wait_for 10 test -s "$d/flood.ok" || fail "the flood did not connect"
for who in root member; do
  t0=$(date +%s%N)
  if [ $who = root ]; then ctl status > "$d/o" 2>&1; else member status > "$d/o" 2>&1; fi ||
    fail "$who's ctl status during a flood of silent clients: $(cat "$d/o")"
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ "$ms" -lt 3000 ] || fail "$who's ctl status took $ms ms during the flood"
  step "100 silent connections: $who's ctl status answered in $ms ms"
done

# --- session files the daemon cannot read are listed invalid, with why
printf -- "-a -e 'cpu-clock\n" > "$d/conf/quote.session"
printf -- '-a -e cpu-clock\0 -F 99\n' > "$d/conf/nul.session"
head -c 70000 /dev/zero | tr '\0' ' ' > "$d/conf/big.session"
status_of() { ctl --json status "$1" > "$d/st-$1.json" 2>/dev/null; }
for s in quote nul big; do
  wait_for 10 status_of $s || fail "$s.session not listed"
  [ "$(json "$d/st-$s.json" "r['sessions'][0]['state']")" = INVALID ] || fail "$s.session: $(cat "$d/st-$s.json")"
done
grep -q "unterminated quote" "$d/st-quote.json" || fail "quote: no reason: $(cat "$d/st-quote.json")"
grep -q "NUL" "$d/st-nul.json" || fail "nul: no reason: $(cat "$d/st-nul.json")"
grep -q "at most 65536 bytes" "$d/st-big.json" || fail "big: no reason: $(cat "$d/st-big.json")"
step "bad session files invalid: $(json "$d/st-quote.json" "r['sessions'][0]['last_error']")"

# --- options after the command; a wrong argument named
"$perfrec" ctl status --json --socket "$sock" > "$d/o" 2>&1 || fail "ctl status --json --socket: $(cat "$d/o")"
json "$d/o" "r['ok']" | grep -q True || fail "status --json: $(cat "$d/o")"
ctl stop a b > "$d/o" 2>&1 && fail "stop a b"
grep -q "unexpected argument 'b'" "$d/o" || fail "stop a b: $(cat "$d/o")"
step "ctl: options after the command; $(head -1 "$d/o")"

kill -TERM "$dpid"; wait "$dpid" || fail "daemon exit"
echo "test_daemon_guard: ok"
