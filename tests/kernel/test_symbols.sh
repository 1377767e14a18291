#!/usr/bin/env bash
# test_symbols.sh - a trace names its frames without the host's binaries.
#
# symprog (tests/kernel/workloads/symprog.c: frame pointers, known function
# names, spinning in symprog_hot_loop -> qsort(symprog_compare), memfrob,
# strtol, getppid, pipe I/O) is copied to a temp dir, recorded with
# `perfrec record -g`, the trace is moved elsewhere and the binary deleted.
# Then `perfrec-analyze report --sort dso,sym` must name:
#  - the program's own hot functions (symprog_compare / symprog_fill),
#  - at least one libc function (memfrob is exported, so it is named from
#    the .dynsym even without libc debug files),
#  - kernel functions through the kernel table ([kernel.kallsyms] rows with
#    a name, not an address);
# the folded export has the frame-pointer chain symprog_hot_loop;symprog_fill;
# a stripped copy of symprog (only .dynsym: its static functions have no
# names in the trace) gets them back with --symfs DIR/.build-id/...; and
# `info` reports the symbol cost (a system-wide run prints the figure).
set -euo pipefail
build=${PERFREC_BUILD_DIR:?}
perfrec=${PERFREC_BIN:?}
ana=${PERFREC_ANALYZE_BIN:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
[ -x "$perfrec" ] && [ -x "$ana" ] && [ -x "$build/tests/symprog" ] ||
  fail "build perfrec, perfrec-analyze and symprog first"

mkdir "$work/host" "$work/laptop" "$work/symfs"
cp "$build/tests/symprog" "$work/host/symprog"
"$perfrec" record -q -g -F 2000 -o "$work/host/t.prec" -- "$work/host/symprog" 2 \
  >"$work/run.out" || fail "record failed: $(cat "$work/run.out")"
mv "$work/host/t.prec" "$work/laptop/t.prec"
rm -f "$work/host/symprog"

# ---- report: program, libc and kernel names
"$ana" report --sort dso,sym --csv "$work/laptop/t.prec" >"$work/report.csv" ||
  fail "report failed"
# CSV: a summary section, then "# rows" with a header naming the columns
rows() {
  awk -F, '/^# rows/ { f = 1; next }
           f && !h { for (i = 1; i <= NF; i++) { if ($i == "dso") d = i; if ($i == "sym") s = i }
                     h = 1; next }
           f && NF { print $d "\t" $s }' "$work/report.csv"
}
rows >"$work/rows.txt"
echo "top rows:"; head -12 "$work/rows.txt"

grep -qP '^symprog\t(symprog_compare|symprog_fill)$' "$work/rows.txt" ||
  fail "the program's hot function is not named"
grep -qP '^libc[^\t]*\tmemfrob$' "$work/rows.txt" || fail "libc's memfrob is not named"
nk=$(grep -cP '^\[kernel\.kallsyms\]\t[A-Za-z_]' "$work/rows.txt" || true)
[ "${nk:-0}" -ge 1 ] || fail "no kernel frame is named"
echo "named: program, libc (memfrob), $nk kernel symbols"

# ---- callchains: the frame-pointer chain through the program
"$ana" export --format folded "$work/laptop/t.prec" >"$work/folded.txt" ||
  fail "export folded failed"
grep -q 'symprog_hot_loop;symprog_fill' "$work/folded.txt" ||
  fail "folded stacks lack symprog_hot_loop;symprog_fill"

# ---- --symfs: a stripped binary's local functions come back
cp "$build/tests/symprog" "$work/host/symprog-stripped"
strip --strip-all "$work/host/symprog-stripped"
"$perfrec" record -q -g -F 2000 -o "$work/laptop/s.prec" -- "$work/host/symprog-stripped" 1 \
  >"$work/run2.out" || fail "record (stripped) failed"
rm -f "$work/host/symprog-stripped"
"$ana" report --sort dso,sym --csv "$work/laptop/s.prec" >"$work/report.csv"
rows >"$work/rows-stripped.txt"
if grep -qP '\tsymprog_compare$' "$work/rows-stripped.txt"; then
  fail "a stripped binary cannot name a static function by itself"
fi
bid=$(readelf -n "$build/tests/symprog" | sed -n 's/.*Build ID: //p')
[ -n "$bid" ] || fail "symprog has no build-id"
mkdir -p "$work/symfs/.build-id/${bid:0:2}"
cp "$build/tests/symprog" "$work/symfs/.build-id/${bid:0:2}/${bid:2}.debug"
"$ana" report --sort dso,sym --csv --symfs "$work/symfs" "$work/laptop/s.prec" >"$work/report.csv"
rows >"$work/rows-symfs.txt"
grep -qP '\t(symprog_compare|symprog_fill)$' "$work/rows-symfs.txt" ||
  fail "--symfs did not restore the stripped binary's names"
# ---- cost: info reports it; a system-wide recording prints the figure
"$ana" info "$work/laptop/t.prec" >"$work/info.txt"
sb=$(awk '$1 == "symbol_bytes" { print $2 }' "$work/info.txt")
[ "${sb:-0}" -gt 0 ] || fail "info shows no symbol_bytes"
"$perfrec" record -q -a -g -F 1000 -o "$work/sw.prec" -- sleep 2 >/dev/null ||
  fail "system-wide record failed"
"$ana" info "$work/sw.prec" >"$work/info-sw.txt"
echo "system-wide 2 s cost: $(awk '$1 ~ /^(symbol_bytes|symbol_time_ms|file_size|samples)$/ { printf "%s=%s ", $1, $2 }' "$work/info-sw.txt")"
grep -q '^symbol_bytes' "$work/info-sw.txt" || fail "system-wide trace has no symbols"
echo "PASS: test_symbols"
