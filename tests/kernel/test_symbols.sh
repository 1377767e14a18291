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
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_symbols symbols
kt_need_root
[ -x "$perfrec" ] && [ -x "$analyze" ] && [ -x "$build/tests/symprog" ] ||
  fail "build perfrec, perfrec-analyze and symprog first"

mkdir "$d/host" "$d/laptop" "$d/symfs"
cp "$build/tests/symprog" "$d/host/symprog"
"$perfrec" record -q -g -F 2000 -o "$d/host/t.prec" -- "$d/host/symprog" 2 \
  >"$d/run.out" || fail "record failed: $(cat "$d/run.out")"
mv "$d/host/t.prec" "$d/laptop/t.prec"
rm -f "$d/host/symprog"

# ---- report: program, libc and kernel names
"$analyze" report --sort dso,sym --csv "$d/laptop/t.prec" >"$d/report.csv" ||
  fail "report failed"
# CSV: a summary section, then "# rows" with a header naming the columns
rows() {
  awk -F, '/^# rows/ { f = 1; next }
           f && !h { for (i = 1; i <= NF; i++) { if ($i == "dso") d = i; if ($i == "sym") s = i }
                     h = 1; next }
           f && NF { print $d "\t" $s }' "$d/report.csv"
}
rows >"$d/rows.txt"
echo "top rows:"; head -12 "$d/rows.txt"

grep -qP '^symprog\t(symprog_compare|symprog_fill)$' "$d/rows.txt" ||
  fail "the program's hot function is not named"
grep -qP '^libc[^\t]*\tmemfrob$' "$d/rows.txt" || fail "libc's memfrob is not named"
nk=$(grep -cP '^\[kernel\.kallsyms\]\t[A-Za-z_]' "$d/rows.txt" || true)
[ "${nk:-0}" -ge 1 ] || fail "no kernel frame is named"
echo "named: program, libc (memfrob), $nk kernel symbols"

# ---- callchains: the frame-pointer chain through the program
"$analyze" export --format folded "$d/laptop/t.prec" >"$d/folded.txt" ||
  fail "export folded failed"
grep -q 'symprog_hot_loop;symprog_fill' "$d/folded.txt" ||
  fail "folded stacks lack symprog_hot_loop;symprog_fill"

# ---- --symfs: a stripped binary's local functions come back
cp "$build/tests/symprog" "$d/host/symprog-stripped"
strip --strip-all "$d/host/symprog-stripped"
"$perfrec" record -q -g -F 2000 -o "$d/laptop/s.prec" -- "$d/host/symprog-stripped" 1 \
  >"$d/run2.out" || fail "record (stripped) failed"
rm -f "$d/host/symprog-stripped"
"$analyze" report --sort dso,sym --csv "$d/laptop/s.prec" >"$d/report.csv"
rows >"$d/rows-stripped.txt"
if grep -qP '\tsymprog_compare$' "$d/rows-stripped.txt"; then
  fail "a stripped binary cannot name a static function by itself"
fi
bid=$(readelf -n "$build/tests/symprog" | sed -n 's/.*Build ID: //p')
[ -n "$bid" ] || fail "symprog has no build-id"
mkdir -p "$d/symfs/.build-id/${bid:0:2}"
cp "$build/tests/symprog" "$d/symfs/.build-id/${bid:0:2}/${bid:2}.debug"
"$analyze" report --sort dso,sym --csv --symfs "$d/symfs" "$d/laptop/s.prec" >"$d/report.csv"
rows >"$d/rows-symfs.txt"
grep -qP '\t(symprog_compare|symprog_fill)$' "$d/rows-symfs.txt" ||
  fail "--symfs did not restore the stripped binary's names"
# ---- cost: info reports it; a system-wide recording prints the figure
"$analyze" info "$d/laptop/t.prec" >"$d/info.txt"
sb=$(awk '$1 == "symbol_bytes" { print $2 }' "$d/info.txt")
[ "${sb:-0}" -gt 0 ] || fail "info shows no symbol_bytes"
"$perfrec" record -q -a -g -F 1000 -o "$d/sw.prec" -- sleep 2 >/dev/null ||
  fail "system-wide record failed"
"$analyze" info "$d/sw.prec" >"$d/info-sw.txt"
echo "system-wide 2 s cost: $(awk '$1 ~ /^(symbol_bytes|symbol_time_ms|file_size|samples)$/ { printf "%s=%s ", $1, $2 }' "$d/info-sw.txt")"
grep -q '^symbol_bytes' "$d/info-sw.txt" || fail "system-wide trace has no symbols"
echo "PASS: test_symbols"
