#!/usr/bin/env bash
# test_fde_names.sh - addresses of a stripped library are named per
# function, by the .eh_frame FDE that covers them, not one row per address.
#
# The test builds libhot.so (gcc -O2 -fPIC, then strip: only .dynsym's
# exported hot_run is left) whose static functions hot_mix (about 85% of
# the time) and hot_sum (about 10%) hold the time, and a program that
# calls hot_run for 3 s. perf records perfrec recording the program
# (perf follows perfrec's child: both tools sample the same run with
# cpu-clock and --call-graph dwarf). Checked:
#  - the report names hot_mix and hot_sum as libhot.so+0xSTART, START the
#    function's address in the unstripped copy (nm), one row each: every
#    sample in libhot.so falls in a named function range or hot_run;
#  - perf names the same samples per address ([.] 0x...: a dozen rows);
#    summed over each function's FDE range (readelf --debug-dump=frames)
#    its shares equal ours within 2 points;
#  - the row totals of our report are the trace's samples.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_fde_names fde
kt_need_root
[ -x "$perfrec" ] && [ -x "$analyze" ] || fail "build perfrec and perfrec-analyze first"
command -v gcc >/dev/null || skip "no gcc"

hotsrc=$src/tests/kernel/workloads/hotlib
gcc -O2 -fPIC -shared -o "$d/libhot.full.so" "$hotsrc/hot.c" || fail "gcc libhot"
cp "$d/libhot.full.so" "$d/libhot.so"
strip "$d/libhot.so"
gcc -O2 -o "$d/hotprog" "$hotsrc/main.c" -L"$d" -lhot -Wl,-rpath,"$d" || fail "gcc hotprog"
nm "$d/libhot.so" 2>&1 | grep -q 'no symbols' || fail "libhot.so is not stripped"
for fn in hot_mix hot_sum; do
  a=$(nm "$d/libhot.full.so" | awk -v f="$fn" '$3 == f || index($3, f ".") == 1 { print $1; exit }')
  [ -n "$a" ] || fail "no $fn in the unstripped libhot"
  printf -v "addr_$fn" 'libhot.so+0x%x' "$((16#$a))"
done
echo "expected: hot_mix = $addr_hot_mix, hot_sum = $addr_hot_sum"

have_perf=0
if command -v perf >/dev/null &&
   perf record -q -e cpu-clock -o "$d/probe.data" -- true >/dev/null 2>&1; then
  have_perf=1
fi
rec=("$perfrec" record -e cpu-clock -F 2000 --call-graph dwarf -o "$d/t.prec" -- "$d/hotprog" 3)
if [ $have_perf = 1 ]; then
  perf record -q -e cpu-clock -F 2000 -o "$d/perf.data" -- "${rec[@]}" >"$d/run.out" 2>&1 ||
    fail "perf record + perfrec record: $(tail -5 "$d/run.out")"
else
  "${rec[@]}" >"$d/run.out" 2>&1 || fail "record: $(tail -5 "$d/run.out")"
fi

# ---- ours: per function, self time, in libhot.so
"$analyze" report -s dso,sym --comm hotprog --csv "$d/t.prec" >"$d/report.csv" || fail "report failed"
awk -F, '/^# rows/ { f = 1; getline; next } f && NF >= 3' "$d/report.csv" >"$d/rows.csv"
echo "perfrec-analyze report -s dso,sym (hotprog):"; head -8 "$d/rows.csv"
grep 'libhot' "$d/rows.csv" >"$d/hot-rows.csv" || fail "no samples in libhot.so"
nrows=$(wc -l <"$d/hot-rows.csv")
share() {   # NAME: our share of a symbol, in libhot.so
  awk -F, -v n="$1" '$5 == n { s += $1 } END { printf "%.2f\n", s + 0 }' "$d/hot-rows.csv"
}
mix=$(share "$addr_hot_mix")
sum=$(share "$addr_hot_sum")
echo "ours: $nrows rows in libhot.so; $addr_hot_mix $mix%, $addr_hot_sum $sum%"
awk -v a="$mix" -v b="$sum" 'BEGIN { exit !(a >= 30 && b >= 3) }' ||
  fail "hot_mix ($mix%) and hot_sum ($sum%) are not named by their function ranges"
# every libhot row is a function: the two ranges, hot_run, nothing per address
awk -F, -v a="$addr_hot_mix" -v b="$addr_hot_sum" \
  '$5 != a && $5 != b && $5 != "hot_run" { print; bad = 1 } END { exit bad }' \
  "$d/hot-rows.csv" || fail "rows of libhot.so that are not a function"
# the rows add up to every sample of the trace
total=$(awk -F, '{ s += $2 } END { print s + 0 }' "$d/rows.csv")
"$analyze" info --json "$d/t.prec" >"$d/info.json" || fail "info failed"
samples=$(json "$d/info.json" 'r["info"]["samples"]')
echo "rows total $total samples, info: $samples"
[ "$total" = "$samples" ] || fail "the report's rows hold $total samples, the trace $samples"

if [ $have_perf = 1 ]; then
  perf report -i "$d/perf.data" -s comm,dso,sym -n --stdio -q 2>/dev/null >"$d/perf.txt" ||
    fail "perf report failed"
  readelf --debug-dump=frames "$d/libhot.so" >"$d/frames.txt"
  # perf's samples of hotprog in libhot.so, one row per address: summed
  # per FDE range, as shares of hotprog's samples, like ours
  python3 - "$d/perf.txt" "$d/frames.txt" "$mix" "$sum" "${addr_hot_mix#libhot.so+}" \
    "${addr_hot_sum#libhot.so+}" "$nrows" "$samples" >"$d/cmp.txt" 2>&1 <<'PY' || { cat "$d/cmp.txt"; fail "perf and perfrec disagree"; }
import re, sys
perf, frames, mix, sm, amix, asum, nrows, n_ours = sys.argv[1:]
ranges = [(int(m.group(1), 16), int(m.group(2), 16)) for m in
          re.finditer(r"FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", open(frames).read())]
total, rows, per = 0, 0, {}
for line in open(perf):
    f = line.split()
    if len(f) < 5 or f[2] != "hotprog":
        continue
    total += int(f[1])
    if f[3] != "libhot.so" or not f[-1].startswith("0x"):
        continue
    rows += 1
    a = int(f[-1], 16)
    for lo, hi in ranges:
        if lo <= a < hi:
            per[lo] = per.get(lo, 0) + int(f[1])
print("perf, the same run: %d samples of hotprog, %d rows of libhot.so addresses, we %s rows"
      % (total, rows, nrows))
bad = total == 0 or rows <= int(nrows)
# The two recorders sample the run each on its own timer: two samples of
# ~1400 of one run, whose shares differ by chance with a standard error of
# sqrt(p(1-p)(1/n + 1/n)) (~1.2 points at 12%). They agree when within 4
# of those (and at least 1 point); a naming error moves whole functions.
n_ours = int(n_ours)
for name, ours, start in (("hot_mix", mix, amix), ("hot_sum", sm, asum)):
    theirs = 100.0 * per.get(int(start, 16), 0) / max(total, 1)
    p = (float(ours) + theirs) / 200.0
    tol = max(1.0, 400.0 * (p * (1 - p) * (1.0 / max(total, 1) + 1.0 / max(n_ours, 1))) ** 0.5)
    print("%s: perfrec %.2f%%, perf %.2f%% (summed over its FDE range; within %.2f)"
          % (name, float(ours), theirs, tol))
    bad |= abs(float(ours) - theirs) > tol
sys.exit(bad)
PY
  cat "$d/cmp.txt"
else
  echo "perf unavailable: per-address comparison skipped"
fi
echo "PASS"
