#!/usr/bin/env bash
# test_stream_refusal.sh - a refusal no reconnect can change (here a bad
# token) ends `perfrec record --to`'s streaming at once: within 2 s the
# recorder says why (the collector's reason), the collector sees one
# connection, not a retry loop; with -o the recording goes on into the
# file, which verifies whole, and the recorder exits non-zero at the end;
# without -o it fails at once. A daemon session with --to goes on into its
# files and `ctl status` shows the reason.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_stream_refusal refusal
kt_on_fail() { kt_tail_logs "$d/coll.log" "$d"/rec*.err "$d/daemon.log"; }
kt_need_perf

echo "right-token-$$" > "$d/token"
echo "wrong-token-$$" > "$d/wrong"
chmod 600 "$d/token" "$d/wrong"
port=$(free_ports 1)
"$perfrec" collect --listen "127.0.0.1:$port" --dir "$d/arch" --token-file "$d/token" \
  2>"$d/coll.log" &
pids+=("$!")
for _ in $(seq 100); do
  grep -q "listening on" "$d/coll.log" 2>/dev/null && break
  sleep 0.05
done
grep -q "listening on" "$d/coll.log" || fail "the collector did not start"

now() { date +%s.%N; }
elapsed() { awk "BEGIN { printf \"%.2f\", $(now) - $1 }"; }

# --- with -o: streaming ends within 2 s, the file goes on
t0=$(now)
"$perfrec" record -e cpu-clock -d 4 -o "$d/local.prec" --to "127.0.0.1:$port" \
  --token-file "$d/wrong" --host testhost --session refused 2>"$d/rec1.err" &
rpid=$!
pids+=("$rpid")
ended=""
for _ in $(seq 60); do
  if grep -q "streaming to 127.0.0.1:$port ended" "$d/rec1.err"; then
    ended=$(elapsed "$t0")
    break
  fi
  sleep 0.05
done
[ -n "$ended" ] || fail "no 'streaming ... ended' within 3 s"
step "streaming ended after ${ended}s"
awk "BEGIN { exit !($ended < 2.0) }" || fail "streaming ended after ${ended}s, not under 2 s"
grep -q "bad token" "$d/rec1.err" || fail "the collector's reason is not in the recorder's message"
grep -q "goes on into $d/local.prec only" "$d/rec1.err" || fail "the message does not say the file goes on"
code=0
wait "$rpid" || code=$?
cat "$d/rec1.err" >&2
[ "$code" != 0 ] || fail "the recorder exited 0 after its stream was refused"
"$analyze" verify "$d/local.prec" >/dev/null || fail "the local file does not verify"
samples=$(sed -n 's/^perfrec: \([0-9]*\) samples.*/\1/p' "$d/rec1.err" | head -1)
step "the local file holds ${samples:-0} samples"
[ "${samples:-0}" -gt 0 ] || fail "the recording did not go on into the file"
n=$(grep -c "bad token" "$d/coll.log" || true)
[ "$n" = 1 ] || fail "the collector refused $n connections, not 1 (a retry loop?)"

# --- a stream alone: the recording fails at once
t0=$(now)
code=0
"$perfrec" record -e cpu-clock -d 30 --to "127.0.0.1:$port" --token-file "$d/wrong" \
  --host testhost --session alone 2>"$d/rec2.err" || code=$?
took=$(elapsed "$t0")
cat "$d/rec2.err" >&2
step "a stream alone: exit $code after ${took}s"
[ "$code" != 0 ] || fail "the recorder exited 0 with its only output refused"
awk "BEGIN { exit !($took < 5.0) }" || fail "the recorder ran ${took}s after the refusal"
grep -q "streaming to 127.0.0.1:$port ended: refused by the collector: bad token" \
  "$d/rec2.err" || fail "no reason in the recorder's error"
n=$(grep -c "bad token" "$d/coll.log" || true)
[ "$n" = 2 ] || fail "the collector refused $n connections in all, not 2"

# --- a daemon session with --to: it goes on into its files, and status
# shows the collector's reason
sock=$d/run/ctl.sock
mkdir -p "$d/conf" "$d/out"
"$perfrec" daemon --foreground --socket "$sock" --config "$d/conf" --output-dir "$d/out" \
  2>>"$d/daemon.log" &
pids+=("$!")
for _ in $(seq 100); do
  grep -q "serving on" "$d/daemon.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "serving on" "$d/daemon.log" || fail "the daemon did not start"
ctl() { "$perfrec" ctl --socket "$sock" "$@"; }
ctl start sess -e cpu-clock -o sess.prec --to "127.0.0.1:$port" --token-file "$d/wrong" \
  >"$d/start.out" 2>&1 || fail "start: $(cat "$d/start.out")"
t0=$(now)
shown=""
for _ in $(seq 40); do
  ctl --json status sess >"$d/st.json" 2>/dev/null || true
  if grep -q "bad token" "$d/st.json"; then
    shown=$(elapsed "$t0")
    break
  fi
  sleep 0.1
done
cat "$d/st.json" >&2
[ -n "$shown" ] || fail "ctl status does not show the collector's reason within 4 s"
step "the daemon session's status shows the reason after ${shown}s"
[ "$(json "$d/st.json" "r['sessions'][0]['state']")" = RUNNING ] ||
  fail "the session does not go on into its file"
ctl status sess | tee "$d/st.txt" >&2
grep -q "bad token" "$d/st.txt" || fail "the text status does not show the reason"
ctl stop sess >/dev/null 2>&1 || true
n=$(grep -c "bad token" "$d/coll.log" || true)
[ "$n" = 3 ] || fail "the collector refused $n connections in all, not 3"
echo "test_stream_refusal: ok"
