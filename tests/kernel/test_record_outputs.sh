#!/usr/bin/env bash
# test_record_outputs.sh - `perfrec record`'s named files, as `ctl start`'s
# sessions write them (recording/outputs.h), with real events:
#   - SIGUSR1 rotates: three files that each verify and analyze alone,
#     whose time ranges join end to start and whose switch counts add up
#     to what the recording counted in all (no record lost or doubled);
#   - --rotate-size with --keep 2: the newest two files stay, and a file
#     of the same name pattern this run did not make is never deleted;
#   - --flight: SIGUSR2 writes a snapshot that analyzes alone while the
#     recording goes on, and the end writes one more;
#   - --max-size stops the recording ("stopped by max size");
#   - per-event losses (read_format LOST) are each file's own share;
#   - combinations that cannot work are refused with a reason.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_record_outputs recout
kt_need_perf
cd "$d"

# --- SIGUSR1: three files, each alone, together one recording
"$perfrec" record -a -e cpu-clock -F 999 --switch-events --rotate-time 1h -o sw.prec \
  2> sw.err & p=$!
sleep 1; kill -USR1 $p; sleep 1; kill -USR1 $p; sleep 1; kill -INT $p
wait $p || fail "record with SIGUSR1 rotation: $(cat sw.err)"
total=$(grep -o '[0-9]* switch events' sw.err | head -1 | cut -d' ' -f1)
[ -n "$total" ] || fail "no switch count in the summary: $(cat sw.err)"
files=$(ls sw.*.prec)
[ "$(echo "$files" | wc -l)" = 3 ] || fail "expected 3 files of sw, got: $files"
sum=0; prev_end=""
for f in $files; do
  "$analyze" verify "$f" > verify.out || fail "$f does not verify: $(cat verify.out)"
  "$analyze" sched "$f" > /dev/null || fail "sched on $f"
  "$analyze" info --json "$f" > info.json || fail "info on $f"
  n=$(json info.json "r['info']['switches']")
  start=$(json info.json "r['info']['start_s']")
  end=$(json info.json "r['info']['start_s'] + r['info']['duration_s']")
  [ "$n" -gt 0 ] || fail "$f holds no switches"
  if [ -n "$prev_end" ]; then
    python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(abs(a-b) > 1e-6)" \
      "$prev_end" "$start" || fail "$f starts at $start, the previous file ended at $prev_end"
  fi
  prev_end=$end
  sum=$((sum + n))
done
[ "$sum" = "$total" ] || fail "the files hold $sum switches, the recording counted $total"
echo "test_record_outputs: SIGUSR1: 3 files verify alone, join end to start, $sum switches = total $total"

# --- --rotate-size and --keep: only this run's files are deleted
# (pingpong's context switches fill several 64k files in 3 s however idle
# the machine: samples of an idle host alone compress to less than one)
echo "not a trace" > rs.20000101-000000.0001.prec
"${PERFREC_BUILD_DIR:?}/tests/pingpong" 100000000 10 >/dev/null &
pp=$!
"$perfrec" record -a -e cpu-clock -F 10k --switch-events --frame-size 16k --flush-ms 100 \
  --rotate-size 64k --keep 2 -o rs.prec -d 3 2> rs.err || { kill "$pp"; fail "record --rotate-size: $(cat rs.err)"; }
kill "$pp"; wait "$pp" 2>/dev/null || true
grep -q "deleted rs\." rs.err || fail "--keep deleted nothing: $(cat rs.err)"
[ -f rs.20000101-000000.0001.prec ] || fail "--keep deleted a file this run did not make"
mine=$(ls rs.*.prec | grep -v '^rs\.20000101')
[ "$(echo "$mine" | wc -l)" = 2 ] || fail "--keep 2 left: $mine"
for f in $mine; do
  "$analyze" verify "$f" > verify.out || fail "$f does not verify: $(cat verify.out)"
done
echo "test_record_outputs: --rotate-size --keep 2: 2 files kept, another run's file untouched"

# --- flight: a snapshot on SIGUSR2 analyzes alone, the end writes another
"$perfrec" record -a -e cpu-clock -F 4000 --flight 64k --frame-size 16k -o fl.prec \
  2> fl.err & p=$!
sleep 1.5; kill -USR2 $p; sleep 1; kill -INT $p
wait $p || fail "record --flight: $(cat fl.err)"
snaps=$(ls fl.*.snapshot.prec)
[ "$(echo "$snaps" | wc -l)" = 2 ] || fail "expected 2 snapshots, got: $snaps $(cat fl.err)"
for f in $snaps; do
  "$analyze" verify "$f" > verify.out || fail "$f does not verify: $(cat verify.out)"
  "$analyze" info --json "$f" > info.json || fail "info on $f"
  [ "$(json info.json "r['info']['samples']")" -gt 0 ] || fail "$f holds no samples"
  "$analyze" report "$f" > /dev/null || fail "report on $f"
done
first=$(echo "$snaps" | head -1)
if grep -q "written ([1-9]" fl.err; then
  "$analyze" dump "$first" > snap.dump
  grep -q "loss what=flight_dropped" snap.dump || fail "no flight_dropped loss in $first"
fi
ls fl.prec fl.*[0-9].prec 2>/dev/null && fail "a flight recording wrote more than snapshots"
echo "test_record_outputs: --flight: SIGUSR2 and the end each wrote a snapshot that analyzes alone"

# --- --max-size
"$perfrec" record -a -e cpu-clock -F 10k --flush-ms 100 --max-size 64k -o ms.prec -d 20 \
  2> ms.err || fail "record --max-size: $(cat ms.err)"
grep -q "stopped by max size" ms.err || fail "--max-size did not stop it: $(cat ms.err)"
"$analyze" verify ms.prec > verify.out || fail "ms.prec does not verify: $(cat verify.out)"
echo "test_record_outputs: --max-size stops the recording, the file complete"

# --- per-event losses (read_format LOST) in each rotated file: tiny rings
# at a high rate lose samples all along; every file carries the growth of
# the kernel's per-event count during it, not the last file the session's
"$perfrec" record -a -e cpu-clock -F 20000 -g -m 1 --switch-events --rotate-time 1s \
  -o el.prec -d 4 2> el.err || fail "record with tiny rings: $(tail -3 el.err)"
ls el.*.prec > el.files
python3 - "$analyze" el.files <<'PY' || fail "per-event losses are not per file"
import json, subprocess, sys
files = open(sys.argv[2]).read().split()
rows = []
for f in files:
    d = json.loads(subprocess.run([sys.argv[1], "info", "--json", f], check=True,
                                  capture_output=True, text=True).stdout)
    by = {l["kind"]: l["lost"] for l in d.get("losses", [])}
    rows.append((f, by.get("kernel_lost", 0), by.get("event_lost", 0)))
print("files (kernel_lost, event_lost):", [(k, e) for _, k, e in rows])
lossy = [r for r in rows[:-1] if r[1] >= 30]
if not lossy:
    print("no file but the last lost records with 1-page rings at 20 kHz: nothing to check"); sys.exit(1)
for f, k, e in lossy:
    if e == 0:
        print(f, "lost", k, "records but carries no per-event loss"); sys.exit(1)
# Losses come in bursts, so any one file (the last too) may hold most of
# them. What a session-wide count would break is the sum: each file then
# repeats the losses of the files before it, and the files together carry
# more per-event losses than records the kernel reported lost (a sample
# lost is a record lost; the slack is a loss counted at a rotation whose
# LOST record reaches the next file).
total_e = sum(e for _, _, e in rows)
total_k = sum(k for _, k, _ in rows)
if total_e > total_k * 1.1 + 50:
    print("the files carry", total_e, "per-event losses but only", total_k,
          "records were lost: a file repeats another's count"); sys.exit(1)
PY
# info names the per-event share apart from the total, in a file that lost
lossy=$(python3 - "$analyze" el.files <<'PY'
import json, subprocess, sys
for f in open(sys.argv[2]).read().split():
    d = json.loads(subprocess.run([sys.argv[1], "info", "--json", f], check=True,
                                  capture_output=True, text=True).stdout)
    if any(l["kind"] == "event_lost" and l["lost"] > 0 for l in d.get("losses", [])):
        print(f); break
PY
)
[ -n "$lossy" ] || fail "no rotated file carries a per-event loss"
grep -q "of which by event" <("$analyze" info "$lossy") ||
  fail "info does not name per-event losses apart from the total"
echo "test_record_outputs: per-event losses are written per rotated file"

# --- refused
"$perfrec" record -a --flight 64m --to 127.0.0.1:1 2> bad.err && fail "--flight with --to"
grep -q "flight" bad.err || fail "no reason: $(cat bad.err)"
"$perfrec" record -a --rotate-size 1m -o - 2> bad.err > /dev/null && fail "--rotate-size with -o -"
grep -q "named files" bad.err || fail "no reason: $(cat bad.err)"
"$perfrec" record -a --max-size 1m --flight 1m 2> bad.err && fail "--max-size with --flight"
grep -q "max-size" bad.err || fail "no reason: $(cat bad.err)"
echo "test_record_outputs: ok"
