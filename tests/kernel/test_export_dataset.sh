#!/usr/bin/env bash
# test_export_dataset.sh - exports of real recordings, one file and a
# dataset of two hosts (one of them rotated into several files):
#   - folded names each callchain once per frame and counts the others:
#     its stacks give, per (comm, leaf), the self samples `report -s
#     comm,sym` counts by naming every sample itself;
#   - folded over the dataset: a host's lines ("host;comm;...") are, with
#     the host taken off, the export of that host's files alone (its
#     rotated files counted together), and each host's sum is its sample
#     count in `report -s host`;
#   - pprof over the dataset: the samples of each "host" label add up to
#     the same counts (decoded by protoc);
#   - perfetto over the dataset (decoded by protoc against Perfetto's
#     proto): each host a machine, named; its PerfSamples per thread equal
#     `report -s host,tid`; its processes named "comm @host";
#   - otlp over the dataset (decoded by protoc): one ResourceProfiles per
#     host, with the samples `report -s host` counts, one dictionary;
#   - speedscope over the dataset: a profile per host and thread, with
#     the samples `report -s host,tid` counts; and of thousands of short
#     processes, per thread the periods in time order (the unit checker);
#   - report -g and script over host b's rotated files print what they
#     print for the files concatenated (one trace); script over both
#     hosts shows each sample's host ("comm @host").
set -euo pipefail
perfrec=${PERFREC_BIN:?}
analyze=${PERFREC_ANALYZE_BIN:?}
src=${PERFREC_SOURCE_DIR:?}
pingpong=${PERFREC_BUILD_DIR:?}/tests/pingpong
d=$(mktemp -d /tmp/perfrec-export-ds-XXXXXX)
cleanup() {
  if [ -n "${KEEP:-}" ]; then echo "test_export_dataset: files kept in $d" >&2; else rm -rf "$d"; fi
}
trap cleanup EXIT
fail() { echo "test_export_dataset: FAIL: $*" >&2; exit 1; }
if ! "$perfrec" record -e cpu-clock -d 0.1 -q -o "$d/probe.prec" -- true 2>"$d/probe.err"; then
  if [ -n "${CI:-}" ]; then fail "perf events unavailable: $(cat "$d/probe.err")"; fi
  echo "test_export_dataset: skipped: perf events unavailable"; exit 0
fi
rm -f "$d/probe.prec"
command -v unshare >/dev/null || fail "unshare (util-linux) is needed for a second host name"

# host "vm-b" (its own UTS namespace): rotated every second; this host: one
# file. Both pingpong with kernel and user stacks.
mkdir -p "$d/ds/b" "$d/ds/a"
unshare -u sh -c "hostname export-ds-b && exec \"$perfrec\" record -e cpu-clock -F 999 -g -q \
  --rotate-time 1s -o \"$d/ds/b/b.prec\" -- \"$pingpong\" 3000 10 0 200" >/dev/null ||
  fail "recording host b"
"$perfrec" record -e cpu-clock -F 999 -g -q -o "$d/ds/a/a.prec" -- "$pingpong" 2000 10 0 200 \
  >/dev/null || fail "recording this host"
nb=$(ls "$d"/ds/b/*.prec | wc -l)
[ "$nb" -ge 2 ] || fail "host b's recording did not rotate: $(ls "$d/ds/b")"
ha=$("$analyze" info --json "$d/ds/a/a.prec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["hostname"])')
[ "$ha" != export-ds-b ] || fail "both recordings name host export-ds-b"

# --- one file: folded per (comm, leaf) = report's self samples
for f in "$d/ds/a/a.prec" $(ls "$d"/ds/b/*.prec | head -1); do
  "$analyze" export --format folded "$f" > "$d/one.folded" || fail "export folded $f"
  "$analyze" report -s comm,sym --top 0 --json "$f" > "$d/one.json" || fail "report $f"
  python3 - "$d/one.folded" "$d/one.json" <<'EOF' || fail "folded leaves of $f differ from report"
import json, sys
from collections import Counter
fold = Counter()
for line in open(sys.argv[1]):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    fr = stack.split(";")
    fold[(fr[0], fr[-1])] += int(n)
rep = Counter()
for r in json.load(open(sys.argv[2]))["rows"]:
    if r["samples"]:
        rep[(r["comm"], r["sym"])] += r["samples"]
if fold != rep:
    diff = {k: (fold.get(k), rep.get(k)) for k in set(fold) | set(rep) if fold.get(k) != rep.get(k)}
    sys.exit(f"(comm, leaf): folded vs report: {sorted(diff.items())[:10]}")
print(f"test_export_dataset: {sys.argv[1]}: {sum(fold.values())} samples, "
      f"{len(fold)} (comm, leaf) pairs as report counts them")
EOF
done

# --- the dataset: per host, its own export; sums = report -s host
"$analyze" export --format folded "$d/ds" > "$d/ds.folded" 2>"$d/ds.err" ||
  fail "export folded over the dataset: $(cat "$d/ds.err")"
"$analyze" export --format folded "$d/ds/b" > "$d/b.folded" || fail "export folded host b"
"$analyze" export --format folded "$d/ds/a" > "$d/a.folded" || fail "export folded host a"
"$analyze" report -s host --json "$d/ds" > "$d/hosts.json" || fail "report -s host"
python3 - "$d" export-ds-b "$ha" <<'EOF' || fail "folded over the dataset"
import json, sys
from collections import Counter
d, hb, ha = sys.argv[1:]
def lines(path, strip=None):
    c = Counter()
    for line in open(path):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        if strip is not None:
            host, stack = stack.split(";", 1)
            if host != strip:
                continue
        c[stack] += int(n)
    return c
hosts = {r["host"]: r["samples"] for r in json.load(open(f"{d}/hosts.json"))["rows"]}
for host, alone in ((hb, "b"), (ha, "a")):
    ds, own = lines(f"{d}/ds.folded", host), lines(f"{d}/{alone}.folded")
    if ds != own:
        sys.exit(f"{host}: its lines in the dataset's export differ from its files' export")
    if sum(ds.values()) != hosts[host]:
        sys.exit(f"{host}: folded counts {sum(ds.values())}, report -s host {hosts[host]}")
    print(f"test_export_dataset: folded over the dataset: {host} {sum(ds.values())} samples "
          f"in {len(ds)} stacks = its files' export = report -s host")
EOF

"$analyze" report -s host,tid --top 0 --json "$d/ds" > "$d/tids.json" || fail "report -s host,tid"

# --- report -g and script over host b's rotated files: as of the files
# concatenated into one trace (read as one, one call tree per row, no
# merging); over both hosts, script's samples per "comm @host" header
# add up to report -s host
cat $(ls "$d"/ds/b/*.prec) > "$d/b-cat.prec"
"$analyze" report -g -s comm "$d/ds/b" | tail -n +2 > "$d/g-dir.txt" || fail "report -g over host b's files"
"$analyze" report -g -s comm "$d/b-cat.prec" | tail -n +2 > "$d/g-cat.txt" || fail "report -g of the concatenation"
grep -q -- '--[0-9.]*%--' "$d/g-dir.txt" || fail "report -g over host b's files shows no call tree"
cmp -s "$d/g-dir.txt" "$d/g-cat.txt" ||
  fail "report -g over host b's files differs from the concatenation's: $(diff "$d/g-dir.txt" "$d/g-cat.txt" | head -20)"
"$analyze" script "$d/ds/b" > "$d/s-dir.txt" || fail "script over host b's files"
"$analyze" script "$d/b-cat.prec" > "$d/s-cat.txt" || fail "script of the concatenation"
cmp -s "$d/s-dir.txt" "$d/s-cat.txt" || fail "script over host b's files differs from the concatenation's"
"$analyze" script "$d/ds" > "$d/s-ds.txt" || fail "script over the dataset"
python3 - "$d/s-ds.txt" "$d/hosts.json" <<'EOF' || fail "script over the dataset"
import json, re, sys
from collections import Counter
got = Counter(m.group(1) for m in re.finditer(r'^\S.* @(\S+) +\d+/\d+ +\[\d+\]', open(sys.argv[1]).read(), re.M))
want = {r["host"]: r["samples"] for r in json.load(open(sys.argv[2]))["rows"]}
if dict(got) != want:
    sys.exit(f"script samples per host {dict(got)}, report -s host {want}")
print(f"test_export_dataset: script over the dataset: samples per host {dict(got)}")
EOF
echo "test_export_dataset: report -g and script over host b's $nb files = of their concatenation"

# --- pprof over the dataset: samples per host label
if command -v protoc >/dev/null; then
  "$analyze" export --format pprof -o "$d/ds.pb.gz" "$d/ds" || fail "export pprof over the dataset"
  gunzip -c "$d/ds.pb.gz" | protoc --decode=perftools.profiles.Profile -I "$src/proto" \
    "$src/proto/profile.proto" > "$d/ds.pprof.txt" || fail "protoc cannot decode the pprof"
  python3 - "$d/ds.pprof.txt" "$d/hosts.json" <<'EOF' || fail "pprof host labels"
import json, re, sys
from collections import Counter
text = open(sys.argv[1]).read()
strings = [eval(m) for m in re.findall(r'^string_table: (".*")$', text, re.M)]
host = strings.index("host")
per = Counter()
for s in re.findall(r'^sample \{\n(.*?)^\}', text, re.M | re.S):
    v = int(re.findall(r'value: (\d+)', s)[0])
    labels = dict((int(k), int(x)) for k, x in re.findall(r'label \{\s*key: (\d+)\s*str: (\d+)', s))
    per[strings[labels[host]]] += v
hosts = {r["host"]: r["samples"] for r in json.load(open(sys.argv[2]))["rows"]}
if dict(per) != hosts:
    sys.exit(f"pprof samples per host label {dict(per)}, report -s host {hosts}")
print(f"test_export_dataset: pprof over the dataset: samples per host label {dict(per)}")
EOF
  "$analyze" export --format perfetto -o "$d/ds.pftrace" "$d/ds" || fail "export perfetto over the dataset"
  protoc --decode=perfetto.protos.Trace -I "$src/tests/data/perfetto" \
    "$src/tests/data/perfetto/perfetto_trace.proto" < "$d/ds.pftrace" > "$d/ds.pf.txt" ||
    fail "protoc cannot decode the perfetto export"
  python3 - "$d/ds.pf.txt" "$d/tids.json" <<'EOF' || fail "perfetto over the dataset"
import json, re, sys
from collections import Counter
text = open(sys.argv[1]).read()
packets = re.split(r'^packet \{$', text, flags=re.M)[1:]
names, samples, procs = {}, Counter(), set()
for p in packets:
    m = re.search(r'^  machine_id: (\d+)$', p, re.M)
    mid = int(m.group(1)) if m else 0
    n = re.search(r'machine_name: "(.*)"', p)
    if n:
        names[mid] = n.group(1)
    if 'perf_sample {' in p:
        samples[(mid, int(re.search(r'^    tid: (\d+)$', p, re.M).group(1)))] += 1
    for name in re.findall(r'process_name: "(.*)"', p):
        procs.add((mid, name))
if 0 in names or len(names) != 2:
    sys.exit(f"machines {names}: expected two, numbered from 1")
got = Counter({(names[m], t): n for (m, t), n in samples.items()})
want = Counter({(r["host"], int(r["tid"])): r["samples"]
                for r in json.load(open(sys.argv[2]))["rows"] if r["samples"]})
if got != want:
    diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
    sys.exit(f"perf_samples per (host, tid) vs report -s host,tid: {sorted(diff.items())[:10]}")
bad = [(m, n) for m, n in procs if not n.endswith(" @" + names.get(m, "?"))]
if bad:
    sys.exit(f"process names without their host: {bad[:5]}")
print(f"test_export_dataset: perfetto over the dataset: {len(names)} machines "
      f"{sorted(names.values())}, {sum(got.values())} samples in {len(got)} threads "
      f"= report -s host,tid")
EOF
  data=$src/tests/data/otlp
  "$analyze" export --format otlp -o "$d/ds.otlp" "$d/ds" || fail "export otlp over the dataset"
  protoc --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
    -I "$data" "$data/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" \
    < "$d/ds.otlp" > "$d/ds.otlp.txt" || fail "protoc cannot decode the otlp export"
  python3 - "$d/ds.otlp.txt" "$d/hosts.json" <<'EOF' || fail "otlp over the dataset"
import json, re, sys
text = open(sys.argv[1]).read()
blocks = re.split(r'^resource_profiles \{$', text, flags=re.M)[1:]
got = {}
for b in blocks:
    b = b.split('\ndictionary {', 1)[0]
    host = re.search(r'key: "host.name"\s*value \{\s*string_value: "(.*)"', b).group(1)
    if host in got:
        sys.exit(f"host {host} has two ResourceProfiles")
    got[host] = len(re.findall(r'^      samples \{$', b, re.M))
want = {r["host"]: r["samples"] for r in json.load(open(sys.argv[2]))["rows"]}
if got != want:
    sys.exit(f"otlp samples per resource {got}, report -s host {want}")
if text.count('\ndictionary {') != 1:
    sys.exit("not one dictionary")
print(f"test_export_dataset: otlp over the dataset: one ResourceProfiles per host, samples {got}")
EOF
else
  [ -z "${CI:-}" ] || fail "protoc missing"
  echo "test_export_dataset: pprof, perfetto and otlp decode skipped: protoc not installed"
fi
# --- speedscope over the dataset: a profile per (host, thread), its
# samples those report counts; and a trace of thousands of short
# processes (more samples than all threads may buffer: every buffer
# spilled several times) read back by the unit checker: per thread, its
# periods in dump's time order
"$analyze" export --format speedscope -o "$d/ds.speedscope.json" "$d/ds" ||
  fail "export speedscope over the dataset"
python3 - "$d/ds.speedscope.json" "$d/tids.json" <<'EOF' || fail "speedscope over the dataset"
import json, re, sys
from collections import Counter
d = json.load(open(sys.argv[1]))
got = Counter()
for p in d["profiles"]:
    m = re.fullmatch(r'.* \(host (.*), pid \d+, tid (\d+)\)', p["name"])
    if not m:
        sys.exit(f"profile {p['name']!r} does not name its host")
    got[(m.group(1), int(m.group(2)))] += len(p["samples"])
want = Counter({(r["host"], int(r["tid"])): r["samples"]
                for r in json.load(open(sys.argv[2]))["rows"] if r["samples"]})
if got != want:
    sys.exit(f"speedscope samples per (host, tid) {sorted(got.items())} vs report {sorted(want.items())}")
print(f"test_export_dataset: speedscope over the dataset: {len(got)} profiles "
      f"= report -s host,tid")
EOF
"$perfrec" record -q -e cpu-clock -F 4999 -g -o "$d/many.prec" -- \
  sh -c 'i=0; while [ $i -lt 800 ]; do awk "BEGIN { for (i = 0; i < 100000; i++) s += i }"; i=$((i + 1)); done' ||
  fail "recording many processes"
out=$(bash "$src/tests/unit/analyzer/render/test_export_speedscope.sh" "$d/many.prec") ||
  fail "speedscope of many short processes: $out"
n=$(sed -n 's/.* samples=\([0-9]*\).*/\1/p' <<<"$out")
[ "${n:-0}" -gt 8192 ] || fail "many short processes: $n samples, fewer than the threads may buffer (8192)"
echo "test_export_dataset: many short processes: $out"
echo "test_export_dataset: PASS"
