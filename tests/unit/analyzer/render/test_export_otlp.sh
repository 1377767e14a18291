#!/usr/bin/env bash
# test_export_otlp.sh - `export --format otlp` decoded by protoc as an
# ExportProfilesServiceRequest against opentelemetry-proto's own files
# (tests/data/otlp), and checked for what it says against `report --json`
# of the same trace:
#  - one ResourceProfiles naming the host as the trace's header does, one
#    Profile per sampling event, every dictionary table starting with its
#    zero entry, every index in range;
#  - each profile's sample count is `report --event EV`'s, its values add
#    up to the report's period;
#  - the functions by self samples (each sample's leaf location's function)
#    are `report --sort sym`'s rows, samples and period alike;
#  - each sample has one value, one timestamp on the wall clock within the
#    profile's time range, and its thread's attributes.
# Usage from a kernel test: test_export_otlp.sh TRACE.
set -euo pipefail
src=${PERFREC_SOURCE_DIR:?}
build=${PERFREC_BUILD_DIR:?}
ana=${PERFREC_ANALYZE_BIN:?}
command -v protoc >/dev/null || { echo "SKIP: protoc not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
data=$src/tests/data/otlp

check() {   # TRACE NAME
  local trace=$1 name=$2
  "$ana" export "$trace" --format otlp -o "$work/$name.otlp"
  protoc --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
    -I "$data" "$data/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" \
    <"$work/$name.otlp" >"$work/$name.txt" || fail "$name: protoc cannot decode the request"
  "$ana" report "$trace" --json --sort sym >"$work/$name.report.json"
  "$ana" dump "$trace" --json >"$work/$name.dump.jsonl"
  grep -m1 '"kind":"header"' "$work/$name.dump.jsonl" >"$work/$name.header.json"
  # one report per event, by position (event names are trace bytes)
  local i=0 ev
  python3 -c 'import json, sys
print("\n".join(json.load(open(sys.argv[1]))["summary"]["events"].split(",")))' \
    "$work/$name.report.json" >"$work/$name.events"
  while IFS= read -r ev; do
    "$ana" report "$trace" --json --event "$ev" >"$work/$name.report.$i.json"
    i=$((i + 1))
  done <"$work/$name.events"
  PYTHONPATH="$src/tests/lib" python3 - "$work/$name" <<'PY' || fail "$name: content differs (above)"
import collections, glob, json, sys
from pbtext import parse, one
base = sys.argv[1]
req = parse(open(base + ".txt").read())
header = json.load(open(base + ".header.json"))
bad = []
d = req["dictionary"][0]
strings = d["string_table"]
assert strings[0] == "", "string_table[0] is not empty"
for table in ("mapping_table", "location_table", "function_table", "attribute_table", "stack_table"):
    if d.get(table, [None])[0] != {}:
        bad.append("%s[0] is not the zero value" % table)
def idx(msg, key, table):
    i = int(one(msg, key, 0))
    if not 0 <= i < len(d.get(table, [])):
        bad.append("%s %d outside %s" % (key, i, table))
        return None
    return i
attrs = {}
for i, a in enumerate(d["attribute_table"][1:], 1):
    v = a["value"][0]
    attrs[i] = (strings[int(one(a, "key_strindex", 0))], one(v, "string_value", one(v, "int_value")))
rps = req["resource_profiles"]
assert len(rps) == 1, "%d ResourceProfiles" % len(rps)
res = {one(a, "key"): one(a["value"][0], "string_value") for a in rps[0]["resource"][0]["attributes"]}
if (res.get("host.name"), res.get("host.arch"), res.get("os.version")) != \
        (header["host"], header["machine"], header["kernel"]):
    bad.append("resource %s, header %s" % (res, header))
report = json.load(open(base + ".report.json"))
events = open(base + ".events").read().split("\n")
self_samples, self_period = collections.Counter(), collections.Counter()
for prof in rps[0]["scope_profiles"][0]["profiles"]:
    ev = strings[int(one(prof["sample_type"][0], "type_strindex"))]
    t0 = int(one(prof, "time_unix_nano"))
    t1 = t0 + int(one(prof, "duration_nano", 0))
    samples = prof.get("samples", [])
    want = json.load(open("%s.report.%d.json" % (base, events.index(ev))))["summary"]
    total = 0
    for s in samples:
        vals, ts = s.get("values", []), s.get("timestamps_unix_nano", [])
        if len(vals) != 1 or len(ts) != 1 or not t0 <= int(ts[0]) <= t1:
            bad.append("%s: sample values %s timestamps %s outside [%d, %d]" % (ev, vals, ts, t0, t1))
            continue
        keys = {attrs[int(a)][0] for a in s.get("attribute_indices", [])}
        if keys != {"process.pid", "process.executable.name", "thread.id", "thread.name"}:
            bad.append("%s: sample attributes %s" % (ev, sorted(keys)))
        st = idx(s, "stack_index", "stack_table")
        if not st:
            bad.append("%s: sample without a stack" % ev)
            continue
        locs = d["stack_table"][st].get("location_indices", [])
        leaf = d["location_table"][int(locs[0])]
        fn = d["function_table"][int(one(leaf["lines"][0], "function_index"))]
        name = strings[int(one(fn, "name_strindex", 0))]
        self_samples[name] += 1
        self_period[name] += int(vals[0])
        total += int(vals[0])
    if len(samples) != want["samples_shown"] or total != want["total_period"]:
        bad.append("%s: %d samples, period %d; report --event: %d, %d"
                   % (ev, len(samples), total, want["samples_shown"], want["total_period"]))
rows = {r["sym"]: (r["samples"], r["period"]) for r in report["rows"]}
got = {k: (self_samples[k], self_period[k]) for k in self_samples}
if got != rows:
    diff = sorted(set(got.items()) ^ set(rows.items()))[:10]
    bad.append("functions by self samples differ from report --sort sym: %s" % diff)
for b in bad[:20]:
    print(b, file=sys.stderr)
top = sorted(rows.items(), key=lambda kv: -kv[1][0])[:3]
print("%s: samples=%d functions=%d top=%s" % (base.rsplit("/", 1)[1], sum(self_samples.values()),
      len(got), ",".join(k for k, _ in top)))
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
check "$work/h.prec" hostile
grep -qF 'string_table: "</script><img src=x onerror=alert(1)>"' "$work/hostile.txt" ||
  fail "hostile symbol not in the string table as it is"
echo "otlp: decoded and checked"
