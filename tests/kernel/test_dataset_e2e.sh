#!/usr/bin/env bash
# test_dataset_e2e.sh - real recordings read as one dataset:
#   - a daemon session rotated every 2 s for 10 s, analyzed as its
#     directory: report's sample count is the sum of the files' own info
#     counts; sched's per-thread switch-ins over a common window equal
#     those of a second `perfrec record` made at the same time on the same
#     events (both at once, the same kernel switches: exact);
#   - the same kind of session streamed to a collector with a local -o
#     copy, analyzed over both directories: each sample counted once (the
#     copy named on stderr), as many as the local file alone holds.
set -euo pipefail
perfrec=${PERFREC_BIN:?}
analyze=${PERFREC_ANALYZE_BIN:?}
pingpong=${PERFREC_BUILD_DIR:?}/tests/pingpong
d=$(mktemp -d /tmp/perfrec-dataset-XXXXXX)
sock=$d/run/ctl.sock
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${KEEP:-}" ]; then echo "test_dataset_e2e: files kept in $d" >&2; else rm -rf "$d"; fi
}
trap cleanup EXIT
fail() {
  echo "test_dataset_e2e: FAIL: $*" >&2
  cat "$d"/*.log >&2 2>/dev/null || true
  exit 1
}
if ! "$perfrec" record -e cpu-clock -d 0.1 -q -o "$d/probe.prec" -- true 2>"$d/probe.err"; then
  if [ -n "${CI:-}" ]; then fail "perf events unavailable: $(cat "$d/probe.err")"; fi
  echo "test_dataset_e2e: skipped: perf events unavailable"; exit 0
fi
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# --- a daemon session rotated every 2 s, and a single recording at once
mkdir -p "$d/conf" "$d/out"
"$perfrec" daemon --foreground --socket "$sock" --config "$d/conf" --output-dir "$d/out" \
  2>>"$d/daemon.log" &
pids+=("$!")
for _ in $(seq 100); do grep -q "serving on" "$d/daemon.log" 2>/dev/null && break; sleep 0.05; done
grep -q "serving on" "$d/daemon.log" || fail "daemon did not start"
# a few thousand switches a second (each round spins 200 us a side): the
# rings keep up, so both recordings hold every switch; 16 MiB rings per CPU
# hold several seconds of them, for a machine so busy that a recorder waits
# that long for a CPU
"$pingpong" 100000000 10 0 200 >/dev/null &
pids+=("$!")
"$perfrec" ctl --socket "$sock" start rot -a -e cpu-clock -F 499 --switch-events -m 4096 \
  --rotate-time 2s -o rot.prec > "$d/start.out" 2>&1 || fail "start: $(cat "$d/start.out")"
"$perfrec" record -a -e cpu-clock -F 499 --switch-events -m 4096 -d 12 -q -o "$d/single.prec" \
  2>"$d/single.log" &
rpid=$!
pids+=("$rpid")
sleep 10
"$perfrec" ctl --socket "$sock" stop rot > "$d/stop.out" 2>&1 || fail "stop: $(cat "$d/stop.out")"
wait "$rpid" || fail "the single recording failed: $(cat "$d/single.log")"
files=$(ls "$d"/out/rot*.prec)
nfiles=$(echo "$files" | wc -l)
[ "$nfiles" -ge 4 ] || fail "expected about 5 rotated files, got: $files"

sum=0
for f in $files; do
  "$analyze" info --json "$f" > "$d/info.json" || fail "info $f"
  sum=$((sum + $(json "$d/info.json" "r['info']['samples']")))
done
"$analyze" report "$d/out" --json > "$d/report.json" 2>"$d/report.err" || fail "report over the directory"
got=$(json "$d/report.json" "r['summary']['samples']")
[ "$got" = "$sum" ] || fail "report over $nfiles files counts $got samples, their info counts $sum"
echo "test_dataset_e2e: $nfiles rotated files: report $got samples = sum of info $sum"

# the listing: one host, one session of all the files
"$analyze" info "$d/out" --json > "$d/list.json" || fail "info DIR"
[ "$(json "$d/list.json" "r['dataset']['sessions']")" = 1 ] || fail "rotations not one session: $(cat "$d/list.json")"
[ "$(json "$d/list.json" "r['sessions'][0]['files']")" = "$nfiles" ] || fail "session files"

# a common window, well inside both recordings (absolute monotonic s)
"$analyze" info --json "$d/single.prec" > "$d/si.json"
first=$(echo "$files" | head -1)
last=$(echo "$files" | tail -1)
"$analyze" info --json "$first" > "$d/fi.json"
"$analyze" info --json "$last" > "$d/la.json"
win=$(python3 - "$d" <<'EOF'
import json, sys
d = sys.argv[1]
s, f, l = (json.load(open(f"{d}/{n}.json"))["info"] for n in ("si", "fi", "la"))
lo = max(s["start_s"], f["start_s"]) + 0.5
hi = min(s["start_s"] + s["duration_s"], l["start_s"] + l["duration_s"]) - 0.5
assert hi - lo > 5, (lo, hi)
print(f"{lo:.6f} {hi:.6f}")
EOF
) || fail "no common window"
# Each perf event reads the clock for its own copy of a switch record: the
# two recordings time the same switch some 0.3-1 us apart, so a switch
# that close to an edge is inside one window and outside the other. Each
# edge goes to the middle of the longest pause between switch records of
# either recording within 0.1 s of it, far wider than that skew.
quiet() {
  "$analyze" dump "$d/single.prec" "$d/out" --json --no-progress \
    --time "$(python3 -c "import sys; a = float(sys.argv[1]); print(f'@{a - 0.1:.6f},@{a + 0.1:.6f}')" "$1")" \
    > "$d/edge.jsonl" || return 1
  python3 - "$d/edge.jsonl" <<'EOF'
import json, sys
ts = sorted({json.loads(x)["time"] for x in open(sys.argv[1]) if '"context_switch"' in x})
gap, at = max((b - a, a + (b - a) // 2) for a, b in zip(ts, ts[1:]))
if gap < 20000:
    sys.exit(f"no pause of 20 us between switch records near the edge (longest {gap} ns)")
print(f"{at / 1e9:.9f} {gap}")
EOF
}
read -r lo0 hi0 <<<"$win"
edge=$(quiet "$lo0") || fail "window start: $edge"
read -r lo gaplo <<<"$edge"
edge=$(quiet "$hi0") || fail "window end: $edge"
read -r hi gaphi <<<"$edge"
win="@$lo,@$hi"
echo "test_dataset_e2e: window $win, edges in pauses of $gaplo and $gaphi ns between switch records"
# a comparison of the same events needs both to have lost none
for f in "$d/single.prec" $files; do
  "$analyze" info --json "$f" > "$d/l.json"
  lost=$(json "$d/l.json" "sum(x['lost'] for x in r.get('losses', []))")
  [ "$lost" = 0 ] || fail "$f lost $lost records: the recordings cannot be compared"
done
"$analyze" sched "$d/out" --time "$win" --csv > "$d/sched-dir.csv" || fail "sched DIR"
"$analyze" sched "$d/single.prec" --time "$win" --csv > "$d/sched-one.csv" || fail "sched single"
python3 - "$d/sched-dir.csv" "$d/sched-one.csv" <<'EOF' || fail "sched per-thread switch-ins differ"
import csv, sys
def tasks(path):
    rows, on = {}, False
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("# "):
            on = line == "# tasks"
            continue
        if on and line and not line.startswith("comm,"):
            r = next(csv.reader([line]))
            rows[int(r[2])] = int(r[5])
    return rows
a, b = tasks(sys.argv[1]), tasks(sys.argv[2])
diff = {t: (a.get(t), b.get(t)) for t in set(a) | set(b) if a.get(t, 0) != b.get(t, 0)}
print(f"test_dataset_e2e: sched over the window: {len(a)} threads, "
      f"{sum(a.values())} switch-ins (dataset) vs {sum(b.values())} (single)")
if diff:
    print("differ:", sorted(diff.items())[:20])
    sys.exit(1)
EOF

# --- streamed to a collector with a local -o copy: both directories
. "$(dirname "$0")/../lib/ports.sh"
port=$(free_ports 1)
echo "tok-$$" > "$d/token"
chmod 600 "$d/token"
"$perfrec" collect --listen "127.0.0.1:$port" --dir "$d/arch" --token-file "$d/token" \
  2>>"$d/coll.log" &
pids+=("$!")
for _ in $(seq 100); do grep -q "listening on" "$d/coll.log" 2>/dev/null && break; sleep 0.05; done
grep -q "listening on" "$d/coll.log" || fail "collector did not start"
mkdir -p "$d/local"
"$perfrec" record -a -e cpu-clock -F 499 --switch-events -d 3 -q -o "$d/local/web.prec" \
  --to "127.0.0.1:$port" --token-file "$d/token" --host web01 --session s1 \
  --finish-timeout 30s 2>"$d/stream.log" || fail "streamed recording: $(cat "$d/stream.log")"
[ -f "$d/arch/web01/s1.prec" ] || fail "no archive file: $(ls -R "$d/arch")"
"$analyze" report "$d/local/web.prec" --json > "$d/one.json" || fail "report local"
"$analyze" report "$d/arch" "$d/local" --json > "$d/both.json" 2>"$d/both.err" \
  || fail "report over both directories: $(cat "$d/both.err")"
one=$(json "$d/one.json" "r['summary']['samples']")
both=$(json "$d/both.json" "r['summary']['samples']")
[ "$one" -gt 0 ] || fail "no samples recorded"
[ "$both" = "$one" ] || fail "both directories count $both samples, the file alone $one"
grep -q "holds the same data as" "$d/both.err" || fail "the copy was not named: $(cat "$d/both.err")"
echo "test_dataset_e2e: collector copy + local -o copy: $both samples, counted once"
echo "test_dataset_e2e: PASS"
