#!/usr/bin/env bash
# Stock tools read a .prec file: `zstd -dc FILE | protoc --decode=perfrec.Trace`
# skips our skippable frames and decodes every data frame's packets.
# The file comes from `format_bench --write` (header, comm, 4 samples).
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
expect '^  sample {' 4
expect '^  task {' 1
expect 'str: "tiny-worker"' 1
expect 'ip: 4198656' 1           # 0x401100
# the callchain {0xffffffff81001234, 0x401100, 0x401200}, interned once as
# a run of 3 nodes from the outermost caller (1.1): zigzag(0x401200),
# zigzag(0x401100 - 0x401200), zigzag(0xffffffff81001234 - 0x401100)
expect '^    callchain_nodes {' 1
expect 'addrs: 8397824$' 1
expect 'addrs: 511$' 1
expect 'addrs: 4269800855$' 1
# the user-mode sample at 0x401234 called from 0x401200 names only its
# callers, node 1 (the kernel wrote [PERF_CONTEXT_USER, 0x401234, 0x401200])
expect 'callchain_callers: true' 1
expect '^packet {' 8             # header, 2 x interned, task, 4 samples
# dt: the task at 1000000 ns, then +1000 per sample (zigzag decoded by protoc)
expect '^  dt: 1000000$' 1
expect '^  dt: 1000$' 4
if [ $fail -ne 0 ]; then cat "$work/text"; exit 1; fi
echo "ok: protoc decoded $(grep -c '^packet {' "$work/text") packets"
