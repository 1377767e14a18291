#!/usr/bin/env bash
# test_speedscope.sh - our speedscope export opened by speedscope's own page.
#
# speedscope (the npm package, pinned below; it ships its built page in
# dist/release) is installed from the npm registry into a temporary
# directory and served with our export on loopback (python3 http.server).
# Headless Chromium opens the page with #profileURL= pointing at the file
# and #view=sandwich, whose function table is HTML (the flame graphs are
# canvas), and the test reads the document the page built (--dump-dom):
#  1. tracegen's trace: the profile loads, the active profile is the
#     thread with the most samples (pingpong, tid 100) and the table's
#     first row (most self time) is schedule, its hottest leaf, in ms
#     (unit nanoseconds understood);
#  2. a recorded workload (root): pingpong spins 300 ms on its main
#     thread, then its threads spin per round: spin is the first row of
#     the main thread's table.
set -euo pipefail
build=${PERFREC_BUILD_DIR:?}
source_dir=${PERFREC_SOURCE_DIR:?}
ana=${PERFREC_ANALYZE_BIN:?}
perfrec=${PERFREC_BIN:-}
speedscope_version=1.25.0
work=$(mktemp -d)
server=
cleanup() {
  local rc=$?
  if [ -n "$server" ]; then kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { if [ -n "${CI:-}" ]; then fail "$*"; fi; echo "SKIP: $*"; exit 0; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || skip "no chromium (tests/install-deps.sh installs it)"
command -v npm >/dev/null || skip "no npm (tests/install-deps.sh installs it)"
# shellcheck source=../lib/ports.sh
. "$source_dir/tests/lib/ports.sh"

(cd "$work" && timeout 300 npm install --no-audit --no-fund --ignore-scripts --silent \
   "speedscope@$speedscope_version" >npm.log 2>&1) ||
  skip "npm install speedscope failed: $(tail -3 "$work/npm.log")"
release=$work/node_modules/speedscope/dist/release
[ -f "$release/index.html" ] || fail "speedscope $speedscope_version has no dist/release/index.html"
mkdir "$work/srv"
cp -r "$release/." "$work/srv/"
port=$(free_ports 1)
python3 -m http.server "$port" --bind 127.0.0.1 -d "$work/srv" >"$work/http.log" 2>&1 &
server=$!
for _ in $(seq 50); do
  python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
    "$port" 2>/dev/null && break
  sleep 0.1
done

# open NAME: loads srv/NAME.json in speedscope's sandwich view, prints
# "PROFILE<TAB>FIRST-ROW-SYMBOL<TAB>FIRST-ROW-SELF" from the document
open_profile() {
  local name=$1 url="http://127.0.0.1:$port"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --window-size=1400,1000 --virtual-time-budget=10000 \
    --user-data-dir="$(mktemp -d -p "$work")" --dump-dom \
    "$url/index.html#profileURL=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$url/$name.json")&view=sandwich" \
    >"$work/$name.dom" 2>"$work/$name.log" || fail "$name: chromium failed: $(tail -3 "$work/$name.log")"
  grep -q "GET /$name.json" "$work/http.log" || fail "$name: the page did not fetch the profile"
  python3 - "$work/$name.dom" "$work/srv/$name.json" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1]).read()
prof = json.load(open(sys.argv[2]))
active = prof["profiles"][prof["activeProfileIndex"]]["name"]
# the toolbar names the profile shown
shown = active if html.escape(active, quote=False) in dom else "(not shown)"
rows = re.findall(r'<tr[^>]*><td[^>]*>([^<]*)<div.*?</td><td[^>]*>([^<]*)<div.*?</td>'
                  r'<td[^>]*><span[^>]*></span>([^<]*)</td></tr>', dom)
if not rows:
    print("%s\t(no table)\t" % shown)
else:
    total, self_, sym = rows[0]
    print("%s\t%s\t%s" % (shown, html.unescape(sym), self_))
PY
}

expect() {   # NAME PROFILE SYMBOL
  local got
  got=$(open_profile "$1")
  IFS=$'\t' read -r prof sym self <<<"$got"
  [ "$prof" = "$2" ] || fail "$1: profile shown '$prof', expected '$2'"
  [ "$sym" = "$3" ] || fail "$1: first row '$sym', expected '$3' (dom: $work/$1.dom)"
  [[ "$self" == *ms* ]] || fail "$1: self time '$self' is not in ms"
  echo "$1: speedscope shows '$prof' with $sym first ($self self)"
}

"$build/tests/tracegen_cli" "$work/g.prec"
"$ana" export "$work/g.prec" --format speedscope -o "$work/srv/gen.json"
expect gen "pingpong (pid 100, tid 100) cpu-clock" schedule

if [ "$(id -u)" = 0 ] && [ -x "$perfrec" ]; then
  "$perfrec" record -q -e cpu-clock -g -o "$work/pp.prec" -- "$build/tests/pingpong" 100 300 \
    >"$work/pp.out" || fail "record pingpong failed"
  "$ana" export "$work/pp.prec" --format speedscope -o "$work/srv/pp.json"
  pid=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d["profiles"][d["activeProfileIndex"]]["name"])' "$work/srv/pp.json")
  [[ "$pid" == "pingpong (pid "* ]] || fail "recorded: the active profile is '$pid', not pingpong's main thread"
  expect pp "$pid" spin
else
  echo "SKIP recorded workload: needs root"
fi
