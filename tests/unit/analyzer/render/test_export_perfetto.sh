#!/usr/bin/env bash
# test_export_perfetto.sh - `export --format perfetto` decoded by protoc
# against Perfetto's own proto (tests/data/perfetto), and checked for what
# it says, against the analyzer's other outputs for the same trace:
#  - every thread met (samples, CPU lanes, slices) has a named descriptor;
#  - every sample's callstack resolves through the interned frames to
#    function names, and the stacks and their counts are the folded
#    export's;
#  - the CPU lanes give each thread the on-CPU time `sched --json` gives;
#  - off-CPU intervals are slices of their duration on their thread,
#    counter tracks add up to `counters --json`'s raw counts, the loss is
#    an instant on the losses track.
# Usage from a kernel test: test_export_perfetto.sh TRACE (checks a
# recorded trace the same way; the fixed expectations are then skipped).
set -euo pipefail
src=${PERFREC_SOURCE_DIR:?}
build=${PERFREC_BUILD_DIR:?}
ana=${PERFREC_ANALYZE_BIN:?}
command -v protoc >/dev/null || { echo "SKIP: protoc not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

check() {   # TRACE NAME [fixed]: exports, decodes, checks
  local trace=$1 name=$2 fixed=${3:-}
  "$ana" export "$trace" --format perfetto -o "$work/$name.pftrace"
  protoc --decode=perfetto.protos.Trace -I "$src/tests/data/perfetto" \
    "$src/tests/data/perfetto/perfetto_trace.proto" \
    <"$work/$name.pftrace" >"$work/$name.txt" || fail "$name: protoc cannot decode the trace"
  "$ana" export "$trace" --format folded >"$work/$name.folded"
  "$ana" sched "$trace" --json >"$work/$name.sched.json"
  "$ana" counters "$trace" --json >"$work/$name.counters.json" 2>/dev/null || echo '{}' >"$work/$name.counters.json"
  "$ana" dump "$trace" --json >"$work/$name.dump.jsonl"
  PYTHONPATH="$src/tests/lib" python3 - "$work/$name" "$fixed" <<'PY' || fail "$name: content differs (above)"
import collections, json, sys
from pbtext import parse, one
base, fixed = sys.argv[1], sys.argv[2] == "fixed"
trace = parse(open(base + ".txt").read())
packets = trace.get("packet", [])
bad = []

# -- the sequence: one writer, first packet clears its state
assert packets and one(packets[0], "sequence_flags") == "1", "first packet does not clear state"
assert all(one(p, "trusted_packet_sequence_id") == "1" for p in packets), "packet off sequence 1"
clocks = {one(c, "clock_id"): int(one(c, "timestamp")) for c in packets[0]["clock_snapshot"][0]["clocks"]}
assert clocks["6"] == clocks["3"], "BOOTTIME and MONOTONIC differ in the snapshot"
assert "1" in clocks, "no wall clock in the snapshot"

# -- descriptors
threads, tracks = {}, {}
for p in packets:
    for td in p.get("track_descriptor", []):
        tracks[one(td, "uuid")] = td
        for th in td.get("thread", []):
            threads[int(one(th, "tid"))] = one(th, "thread_name", "")
unnamed = [t for t, n in threads.items() if not n]
assert not unnamed, "threads without a name: %s" % unnamed

# -- samples: interned tables, then each stack by name
funcs, frames, stacks, maps = {}, {}, {}, {}
folded = collections.Counter()
nsamples = 0
for p in packets:
    for idata in p.get("interned_data", []):
        for f in idata.get("function_names", []):
            funcs[one(f, "iid")] = one(f, "str")
        for m in idata.get("mappings", []):
            maps[one(m, "iid")] = m
        for f in idata.get("frames", []):
            frames[one(f, "iid")] = f
        for c in idata.get("callstacks", []):
            stacks[one(c, "iid")] = c.get("frame_ids", [])
    for s in p.get("perf_sample", []):
        nsamples += 1
        tid = int(one(s, "tid"))
        if tid not in threads:
            bad.append("sample of tid %d without a thread descriptor" % tid)
        cs = one(s, "callstack_iid")
        if cs not in stacks:
            bad.append("callstack %s not interned before use" % cs)
            continue
        names = []
        for fid in stacks[cs]:
            fr = frames.get(fid)
            if fr is None or one(fr, "function_name_id") not in funcs or one(fr, "mapping_id") not in maps:
                bad.append("frame %s does not resolve" % fid)
                break
            names.append(funcs[one(fr, "function_name_id")])
        folded[";".join(names)] += 1
want = collections.Counter()
for line in open(base + ".folded"):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    want[stack.split(";", 1)[1] if ";" in stack else ""] += int(count)
if folded != want:
    bad.append("sample stacks differ from the folded export:\n  perfetto %s\n  folded   %s"
               % (sorted(folded.items())[:8], sorted(want.items())[:8]))

# -- CPU lanes: a thread's on-CPU time = the sum of its slices
oncpu = collections.Counter()
for cpu in sorted({one(b, "cpu") for p in packets for b in p.get("ftrace_events", [])}):
    # in time order, as the trace processor sorts them (a task closed
    # late comes in a bundle of its own)
    evs = sorted((e for p in packets for b in p.get("ftrace_events", []) if one(b, "cpu") == cpu
                  for e in b["event"]), key=lambda e: int(one(e, "timestamp")))
    last = None
    for e in evs:
        t = int(one(e, "timestamp"))
        sw = e["sched_switch"][0]
        if last is not None:
            if t < last[0]:
                bad.append("cpu %s: switch at %d before the previous one" % (cpu, t))
            if int(one(sw, "prev_pid")) != last[1]:
                bad.append("cpu %s: switch at %d from %s, but %d ran" % (cpu, t, one(sw, "prev_pid"), last[1]))
            oncpu[last[1]] += t - last[0]
        nxt = int(one(sw, "next_pid"))
        if nxt and nxt not in threads:
            bad.append("lane thread %d without a descriptor" % nxt)
        last = (t, nxt)
    if last and last[1] != 0:
        bad.append("cpu %s ends on a task, not idle" % cpu)
sched = json.load(open(base + ".sched.json"))
for task in sched.get("tasks", []):
    got = oncpu.get(task["tid"], 0) / 1e6
    if abs(got - task["oncpu_ms"]) > 0.0011:
        bad.append("tid %d on CPU %.3f ms in the lanes, sched says %.3f" % (task["tid"], got, task["oncpu_ms"]))
extra = set(oncpu) - {t["tid"] for t in sched.get("tasks", [])} - {0}
if extra:
    bad.append("lanes run tasks sched does not list: %s" % sorted(extra))

# -- off-CPU slices, losses, counters
dump = [json.loads(l) for l in open(base + ".dump.jsonl")]
intervals = sorted((d["tid"], d["time"] - d["ns"], d["time"]) for d in dump
                   if d["kind"] == "off_cpu" and d["what"] == "interval")
opened, slices, instants = {}, [], []
counters = collections.Counter()
for p in packets:
    for te in p.get("track_event", []):
        ty, tr, t = one(te, "type"), one(te, "track_uuid"), int(one(p, "timestamp", 0))
        if ty == "TYPE_SLICE_BEGIN":
            opened[tr] = (t, one(te, "name"))
        elif ty == "TYPE_SLICE_END":
            b = opened.pop(tr)
            tid = int(one(tracks[tr]["thread"][0], "tid"))
            slices.append((tid, b[0], t))
            assert b[1].startswith("off-cpu "), b[1]
        elif ty == "TYPE_INSTANT":
            instants.append((one(tracks[tr], "name"), one(te, "name")))
        elif ty == "TYPE_COUNTER":
            ev = one(tracks[tr], "name").rsplit(" ", 1)[0].replace(" pid", "")
            counters[ev] += int(one(te, "counter_value"))
if sorted(slices) != intervals:
    bad.append("off-CPU slices %s, intervals %s" % (sorted(slices)[:5], intervals[:5]))
losses = [d for d in dump if d["kind"] == "loss"]
if len(instants) != len(losses) or any(n != "perfrec losses" for n, _ in instants):
    bad.append("losses: %d packets, instants %s" % (len(losses), instants[:5]))
for c in json.load(open(base + ".counters.json")).get("counters", []):
    if counters.get(c["event"], 0) != c["raw"]:
        bad.append("counter %s adds up to %d, counters says %d" % (c["event"], counters.get(c["event"], 0), c["raw"]))

if fixed:
    assert nsamples == 80, nsamples
    assert {threads[100], threads[101], threads[200]} == {"pingpong", "pong", "bash"}, threads
for b in bad[:20]:
    print(b, file=sys.stderr)
print("%s: samples=%d threads=%d lane_threads=%d offcpu_slices=%d counters=%d losses=%d"
      % (base.rsplit("/", 1)[1], nsamples, len(threads), len(oncpu), len(slices), len(counters), len(instants)))
sys.exit(1 if bad else 0)
PY
}

if [ $# -ge 1 ]; then
  check "$1" recorded
  exit 0
fi
gen=$build/tests/tracegen_cli
"$gen" "$work/g.prec"
check "$work/g.prec" plain fixed
"$gen" --offcpu "$work/o.prec"
check "$work/o.prec" offcpu fixed
grep -q 'name: "off-cpu disk"' "$work/offcpu.txt" || fail "no off-cpu disk slice"
"$gen" "$work/r.prec" 5 200
check "$work/r.prec" repeated

# names from the trace are UTF-8 in the trace's string fields (protoc
# refuses anything else), markup kept as it is
"$gen" --hostile "$work/h.prec"
"$ana" export "$work/h.prec" --format perfetto -o "$work/h.pftrace"
protoc --decode=perfetto.protos.Trace -I "$src/tests/data/perfetto" \
  "$src/tests/data/perfetto/perfetto_trace.proto" <"$work/h.pftrace" >"$work/h.txt" ||
  fail "hostile: protoc cannot decode the trace"
grep -qF 'str: "</script><img src=x onerror=alert(1)>"' "$work/h.txt" ||
  fail "hostile: the symbol is not interned as it is"

# filters apply: --tid keeps that thread's samples only
"$ana" export "$work/g.prec" --format perfetto --tid 101 -o "$work/t.pftrace"
protoc --decode=perfetto.protos.Trace -I "$src/tests/data/perfetto" \
  "$src/tests/data/perfetto/perfetto_trace.proto" <"$work/t.pftrace" >"$work/t.txt"
tids=$(grep -A4 'perf_sample {' "$work/t.txt" | awk '/tid:/{print $2}' | sort -u | tr '\n' ' ')
[ "$tids" = "101 " ] || fail "--tid 101 samples are of tids '$tids'"

# binary: refused on a terminal is main's rule; a bad --format names them all
if "$ana" export "$work/g.prec" --format perfettoo 2>"$work/err"; then fail "bad format accepted"; fi
grep -q 'perfetto, speedscope or otlp' "$work/err" || fail "bad --format message: $(cat "$work/err")"
echo "perfetto: decoded and checked"
