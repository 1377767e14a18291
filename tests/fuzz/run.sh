#!/usr/bin/env bash
# tests/fuzz/run.sh BUILD_DIR SECONDS: run every fuzz_* target for SECONDS,
# seeded from tests/fuzz/corpus/<target>/ when present.
set -euo pipefail
dir=$1; secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
shopt -s nullglob
n=0
for bin in "$dir"/tests/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  work=$(mktemp -d)
  seeds=()
  [ -d "$here/corpus/$name" ] && seeds+=("$here/corpus/$name")
  # fuzz_analyze runs a whole command per input: small traces (its seeds
  # are 3-8 KiB) keep executions short, and so many
  maxlen=65536
  [ "$name" = fuzz_analyze ] && maxlen=12288
  echo "fuzz: $name for ${secs}s"
  "$bin" -max_total_time="$secs" -max_len="$maxlen" -timeout=10 -rss_limit_mb=2048 \
         -print_final_stats=0 "$work" "${seeds[@]}" 2>"$work.log" || {
    tail -50 "$work.log"; echo "fuzz: $name FAILED"; exit 1; }
  grep -E '^#[0-9]+.*DONE' "$work.log" | tail -1 || true
  rm -rf "$work" "$work.log"
  n=$((n + 1))
done
echo "fuzz: $n targets ran clean"
