#!/usr/bin/env bash
# tests/static-analysis.sh BUILD_DIR: clang-tidy 14 (checks in .clang-tidy)
# over every format/, recorder/ and analyzer/ source in BUILD_DIR's
# compile_commands.json (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON;
# tests/run-all.sh does). Headers are checked through the files that
# include them only where a finding's path is a main file.
#
# A finding is "FILE CHECK"; tests/static-analysis.allow lists the known
# ones as "FILE CHECK COUNT  # why it stays". Exits 1 on a finding not
# listed or on more of a kind than listed (and on a file clang-tidy could
# not compile); tells when a listed finding is gone or fewer, so the list
# shrinks. Needs clang-tidy-14 (tests/install-deps.sh).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: static-analysis.sh BUILD_DIR}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy) ||
  { echo "static-analysis: clang-tidy not found"; exit 1; }
db=$build/compile_commands.json
[ -f "$db" ] || { echo "static-analysis: no $db (-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

python3 -c '
import json, sys
src = sys.argv[2].rstrip("/") + "/"
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    if f.startswith(src) and f[len(src):].split("/")[0] in ("format", "recorder", "analyzer"):
        print(f)
' "$db" "$src" | sort -u |
  xargs -r -P"$(nproc)" -n4 "$tidy" -p "$build" --quiet >"$out" 2>/dev/null || true

exec python3 - "$src" "$out" "$(cd "$build" && pwd)" <<'PY'
import collections, os, re, sys
src, out = sys.argv[1].rstrip("/") + "/", sys.argv[2]
build = sys.argv[3].rstrip("/") + "/"
found = collections.Counter()
lines = collections.defaultdict(list)
pat = re.compile(r"^(\S+?):(\d+):\d+: (warning|error): (.*) \[([\w.,-]+)\]$")
for line in open(out, errors="replace"):
    m = pat.match(re.sub(r"\x1b\[[0-9;]*m", "", line.rstrip("\n")))
    if not m:
        continue
    path = os.path.realpath(m.group(1))
    if not path.startswith(src) or path.startswith(build):
        continue   # generated code (BPF skeletons, protobuf-c) is not ours
    path = path[len(src):]
    key = "%s %s" % (path, m.group(5))
    found[key] += 1
    lines[key].append("%s:%s: %s" % (path, m.group(2), m.group(4)))
allowed = {}
with open(os.path.join(src, "tests", "static-analysis.allow")) as fh:
    for n, line in enumerate(fh, 1):
        text = line.split("#", 1)[0].split()
        if len(text) == 3:
            allowed["%s %s" % (text[0], text[1])] = (int(text[2]), n)
bad = 0
for key in sorted(found):
    have, (want, n) = found[key], allowed.get(key, (0, 0))
    if have > want:
        bad += 1
        print("static-analysis: NEW %s (%d found, %d allowed)" % (key, have, want))
        for l in lines[key]:
            print("  " + l)
    elif have < want:
        print("static-analysis: line %d of tests/static-analysis.allow allows %d of %s, %d left: lower it"
              % (n, want, key, have))
for key, (want, n) in sorted(allowed.items()):
    if key not in found:
        print("static-analysis: gone, delete line %d of tests/static-analysis.allow: %s" % (n, key))
print("static-analysis: %d findings, %d of them new" % (sum(found.values()), bad))
sys.exit(1 if bad else 0)
PY
