#!/usr/bin/env bash
# Stock tools read a .prec file: `zstd -dc FILE | protoc --decode=perfrec.Trace`
# skips our skippable frames and decodes every data frame's packets.
# The file comes from `format_bench --write` (header, comm, 3 samples).
set -euo pipefail
: "${PERFREC_SOURCE_DIR:?}" "${PERFREC_BUILD_DIR:?}"
bench="$PERFREC_BUILD_DIR/tests/format_bench"
for tool in zstd protoc; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed"; exit 1; }
done
[ -x "$bench" ] || { echo "FAIL: $bench not built"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bench" --write "$work/tiny.prec"
zstd -q -dc "$work/tiny.prec" > "$work/raw"
# the skippable frames (magic, frame info, index) contribute no bytes
[ -s "$work/raw" ] || { echo "FAIL: no packet bytes"; exit 1; }
protoc --decode=perfrec.Trace -I"$PERFREC_SOURCE_DIR/proto" perfrec.proto \
  < "$work/raw" > "$work/text"
fail=0
expect() {
  local n
  n=$(grep -c -- "$1" "$work/text" || true)
  if [ "$n" != "$2" ]; then
    echo "FAIL: '$1' appears $n times, want $2"; fail=1
  fi
}
expect 'hostname: "bench-host"' 1
expect 'kernel_release: "6.1.0-bench"' 1
expect '^  sample {' 3
expect '^  task {' 1
expect 'str: "tiny-worker"' 1
expect 'ip: 4198656' 1           # 0x401100
# the callchain {0xffffffff81001234, 0x401100, 0x401200}, interned once,
# delta-coded: (int64)0xffffffff81001234, 0x401100 - that, 0x100
expect 'ips_delta: -2130701772$' 1
expect 'ips_delta: 2134900428$' 1
expect 'ips_delta: 256$' 1
expect '^packet {' 7             # header, 2 x interned, task, 3 samples
# dt: the task at 1000000 ns, then +1000 per sample (zigzag decoded by protoc)
expect '^  dt: 1000000$' 1
expect '^  dt: 1000$' 3
if [ $fail -ne 0 ]; then cat "$work/text"; exit 1; fi
echo "ok: protoc decoded $(grep -c '^packet {' "$work/text") packets"
