#!/usr/bin/env bash
# test_export.sh - exports read back with stock tools:
#  - pprof: gunzip | protoc --decode=perftools.profiles.Profile decodes it,
#    sample values add up to the trace's samples and the names are there;
#  - folded: every line is "frame;frame;... COUNT", counts add up.
set -euo pipefail
src=${PERFREC_SOURCE_DIR:?}
build=${PERFREC_BUILD_DIR:?}
ana=${PERFREC_ANALYZE_BIN:?}
gen=$build/tests/tracegen_cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$gen" "$work/g.prec"

# ---- export --help: the --format values form one list (an option's line
# inside it would end it early), other options follow it
"$ana" export --help >"$work/help.txt"
formats=$(awk '/^  -f, --format FMT/{f=1; print $4; next} f&&/^  -/{exit}
               f&&/^                     [a-z]/{print $1}' "$work/help.txt" | tr '\n' ' ')
[ "$formats" = "folded pprof json csv perfetto speedscope otlp " ] ||
  fail "export --help: the --format list reads '$formats' (an option inside it?)"
if grep -nF '\n' "$work/help.txt"; then fail "export --help prints a literal \\n"; fi

# ---- pprof
"$ana" export "$work/g.prec" --format pprof -o "$work/p.pb.gz"
gzip -t "$work/p.pb.gz" || fail "pprof output is not gzip"
if ! command -v protoc >/dev/null; then
  echo "SKIP pprof decode: protoc not installed"; exit 77
fi
gunzip -c "$work/p.pb.gz" |
  protoc --decode=perftools.profiles.Profile -I "$src/proto" "$src/proto/profile.proto" \
  >"$work/p.txt" || fail "protoc cannot decode the pprof output"
# value pairs per sample: first = samples, second = period
total=$(awk '/^sample \{/{s=1;n=0} s&&/value:/{n++; if(n==1) t+=$2} /^}/{s=0} END{print t+0}' "$work/p.txt")
[ "$total" = 80 ] || fail "pprof sample counts add up to $total, expected 80"
for name in samples cpu-clock comm pingpong pong bash main ping schedule do_syscall_64 read write; do
  grep -q "string_table: \"$name\"" "$work/p.txt" || fail "pprof string table lacks $name"
done
nsamples=$(grep -c '^sample {' "$work/p.txt")
[ "$nsamples" = 8 ] || fail "pprof has $nsamples distinct stacks, expected 8"

# ---- folded
"$ana" export "$work/g.prec" --format folded -o "$work/f.txt"
lines=0; sum=0
while IFS= read -r line; do
  [[ "$line" =~ ^([^\;]+(\;[^\;]+)*)\ ([0-9]+)$ ]] || fail "folded line does not parse: '$line'"
  sum=$((sum + BASH_REMATCH[3])); lines=$((lines + 1))
done <"$work/f.txt"
[ "$sum" = 80 ] || fail "folded counts add up to $sum, expected 80"
grep -qx 'pingpong;main;ping;write;do_syscall_64;schedule 18' "$work/f.txt" ||
  fail "folded lacks the kernel stack of pingpong"
# filters apply to exports too
"$ana" export "$work/g.prec" --format folded --comm bash >"$work/b.txt"
[ "$(cat "$work/b.txt")" = 'bash;[bash]+0x123 15' ] || fail "folded --comm bash: $(cat "$work/b.txt")"
echo "export: pprof ($nsamples stacks) and folded ($lines lines) read back"

# ---- --report picks json/csv's table: with a stack or timeline format it
# is refused (exit 2, naming what works), never a folded file of unnamed
# frames
for fmt in folded pprof perfetto speedscope otlp; do
  for rep in sched counters info; do
    if "$ana" export "$work/g.prec" --report "$rep" --format "$fmt" -o "$work/r.out" 2>"$work/r.err"; then
      fail "export --report $rep --format $fmt was not refused"
    fi
    grep -q -- "--report $rep goes with --format json or csv; --format $fmt writes the samples' stacks: drop --report" \
      "$work/r.err" || fail "export --report $rep --format $fmt: $(cat "$work/r.err")"
  done
done
# --report report is what folded writes anyway: named frames
"$ana" export "$work/g.prec" --report report --format folded >"$work/rr.txt"
cmp -s "$work/rr.txt" "$work/f.txt" || fail "export --report report --format folded differs from folded"
"$ana" export "$work/g.prec" --report sched --format json >/dev/null || fail "export --report sched --format json"
echo "export: --report with stack and timeline formats refused"

# ---- JSON outputs are valid JSON (JSON Lines for dump)
if command -v python3 >/dev/null; then
  for cmd in "info" "report --children" "sched --hist" "counters --interval" "verify"; do
    # shellcheck disable=SC2086
    "$ana" $cmd "$work/g.prec" --json >"$work/j.json"
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/j.json" ||
      fail "$cmd --json is not valid JSON"
  done
  "$ana" dump "$work/g.prec" --json >"$work/d.jsonl"
  python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    json.loads(line); n += 1
assert n > 100, n' "$work/d.jsonl" || fail "dump --json lines are not valid JSON"
  echo "json: every report parses"
fi
