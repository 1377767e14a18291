#!/usr/bin/env bash
# test_export_speedscope.sh - `export --format speedscope` read back as
# speedscope reads it (its file format: JSON, "sampled" profiles, one
# shared frame table), and checked for what it says against the analyzer's
# other outputs for the same trace:
#  - every stack index names a frame, samples and weights pair up, each
#    profile's endValue is its weights' sum, the active profile has the
#    most samples;
#  - the stacks by name (root first) and their counts are the folded
#    export's;
#  - each profile holds its thread's samples of its event in time order:
#    their periods, in order, are those `dump --json` (time-ordered) gives
#    that thread and event;
#  - names from tracegen's hostile trace come back byte for byte (what
#    the JSON escaping keeps: invalid UTF-8 is U+FFFD, as in --json).
# (For the hostile names the folded export's \xNN escapes differ from JSON's:
# there the stack counts are compared.)
# Usage from a kernel test: test_export_speedscope.sh TRACE.
set -euo pipefail
build=${PERFREC_BUILD_DIR:?}
ana=${PERFREC_ANALYZE_BIN:?}
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

check() {   # TRACE NAME [raw]: raw = names the folded escaping changes
  local trace=$1 name=$2 raw=${3:-}
  "$ana" export "$trace" --format speedscope -o "$work/$name.json"
  "$ana" export "$trace" --format folded >"$work/$name.folded"
  "$ana" dump "$trace" --json >"$work/$name.dump.jsonl"
  python3 - "$work/$name" "$raw" <<'PY' || fail "$name: content differs (above)"
import collections, json, sys
base = sys.argv[1]
d = json.load(open(base + ".json"))
bad = []
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
frames = d["shared"]["frames"]
profiles = d["profiles"]
assert all(isinstance(f["name"], str) and f["name"] for f in frames), "a frame without a name"
folded = collections.Counter()
by_thread = {}
for p in profiles:
    assert p["type"] == "sampled" and p["unit"] in ("nanoseconds", "none"), p["type"]
    if len(p["samples"]) != len(p["weights"]):
        bad.append("%s: %d samples, %d weights" % (p["name"], len(p["samples"]), len(p["weights"])))
    if p["endValue"] != sum(p["weights"]) or p["startValue"] != 0:
        bad.append("%s: values %d..%d, weights add up to %d" % (p["name"], p["startValue"], p["endValue"], sum(p["weights"])))
    for st in p["samples"]:
        if not st or any(not 0 <= i < len(frames) for i in st):
            bad.append("%s: stack %s outside the frame table" % (p["name"], st))
            continue
        folded[";".join(frames[i]["name"] for i in st)] += 1
    tid = int(p["name"].rsplit("tid ", 1)[1].split(")")[0])
    ev = p["name"].rsplit(") ", 1)[1] if ") " in p["name"] else None
    by_thread[(tid, ev)] = p["weights"]
active = profiles[d["activeProfileIndex"]]
if any(len(p["samples"]) > len(active["samples"]) for p in profiles):
    bad.append("the active profile is not the one with the most samples")
want = collections.Counter()
for line in open(base + ".folded"):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    want[stack.split(";", 1)[1] if ";" in stack else ""] += int(count)
if sys.argv[2] == "raw":   # folded writes these names as \xNN: compare counts
    folded, want = sorted(folded.values()), sorted(want.values())
if folded != want:
    bad.append("stacks differ from the folded export:\n  speedscope %s\n  folded     %s"
               % (sorted(folded.items())[:8], sorted(want.items())[:8]))
events = {ev for _, ev in by_thread}
periods = collections.defaultdict(list)
for line in open(base + ".dump.jsonl"):
    r = json.loads(line)
    if r["kind"] == "sample":
        periods[(r["tid"], r["event"] if events != {None} else None)].append(r.get("period") or 1)
if dict(periods) != by_thread:
    for k in sorted(set(periods) | set(by_thread), key=str):
        if periods.get(k) != by_thread.get(k):
            bad.append("%s: weights %s, dump periods %s" % (k, by_thread.get(k, [])[:6], periods.get(k, [])[:6]))
for b in bad[:20]:
    print(b, file=sys.stderr)
print("%s: profiles=%d samples=%d frames=%d" % (base.rsplit("/", 1)[1], len(profiles),
      sum(len(p["samples"]) for p in profiles), len(frames)))
sys.exit(1 if bad else 0)
PY
}

if [ $# -ge 1 ]; then
  check "$1" recorded
  exit 0
fi
gen=$build/tests/tracegen_cli
"$gen" "$work/g.prec"
check "$work/g.prec" plain
"$gen" "$work/r.prec" 5 200
check "$work/r.prec" repeated
"$gen" --hostile "$work/h.prec"
check "$work/h.prec" hostile raw
python3 - "$work/hostile.json" <<'PY' || fail "hostile names do not come back"
import json, sys
d = json.load(open(sys.argv[1]))
names = {f["name"] for f in d["shared"]["frames"]}
assert "</script><img src=x onerror=alert(1)>" in names, names
assert any(p["name"].startswith('"><svg onload=alert(2)> (pid 200') for p in d["profiles"])
PY
# filters apply: --comm bash keeps bash's one profile
"$ana" export "$work/g.prec" --format speedscope --comm bash -o "$work/b.json"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert [p["name"] for p in d["profiles"]] == ["bash (pid 200, tid 200) cpu-clock"], d["profiles"]
assert len(d["profiles"][0]["samples"]) == 15' "$work/b.json" || fail "--comm bash"
echo "speedscope: read back and checked"
