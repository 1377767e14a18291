#!/usr/bin/env bash
# test_fp_cut.sh - frame-pointer chains through code without frame
# pointers end at their junk, as one [truncated] frame, counted by `info`:
# cut by the analyzer in a trace recorded with `perfrec record --no-cut`,
# and by the recorder itself by default (Sample.callchain_cut).
#
# A parallel build (make -j2, gcc -O2 over copies of one of our sources:
# Debian's cc1 and as have no frame pointers) recorded with `-g`
# (frame-pointer chains walked by the kernel) by two recorders at once,
# the default one recording `perfrec record --no-cut -- make`. The
# kernel's walk through them reads zeros, stack addresses and loops up to
# 127 entries deep.
# Checked on the --no-cut trace (the analyzer's rule):
#  - with --no-cut the chains hold runs of unnamed addresses (the junk
#    this is about: otherwise the test proves nothing);
#  - by default no stack holds two unmapped addresses in a row, none ends
#    in a repeated frame, and [truncated] appears at most once per stack,
#    as its outermost frame;
#  - info's cut_frames equals the frames --no-cut shows and the default
#    does not (both from export --format folded), cut_chains the samples
#    with a [truncated] frame.
# On the default trace (the recorder's cut, the same rule):
#  - `export --no-cut` shows fewer samples with unnamed runs than the
#    --no-cut trace (none as a rule: the recorder reads its rings merged
#    by time, so a process's exec and mmaps are known before its samples
#    from any CPU), and a [truncated] frame only as the outermost (the
#    recorder cut the junk: it is not in the file), and the default view
#    none;
#  - info's cut_chains are the samples with a [truncated] frame;
#  - cc1's samples with a [truncated] frame are as frequent as in the
#    --no-cut trace's (the same build at the same time: within 10 points),
#    and the recorder cut them itself: the analyzer cuts at most 1 point
#    more (0 in rehearsals, with and without ASan; it cut 5-7 points more,
#    up to 27 under load, when the recorder kept chains whole for 100 ms
#    after an exec or mmap because it read its rings one after the other).
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_fp_cut fpcut
kt_need_root
[ -x "$perfrec" ] && [ -x "$analyze" ] || fail "build perfrec and perfrec-analyze first"
command -v gcc >/dev/null && command -v make >/dev/null || skip "no gcc or make"

mkdir "$d/src"
for i in 1 2 3 4 5 6; do cp "$src/analyzer/symbols/demangle_rust.c" "$d/src/f$i.c"; done
printf 'all: $(patsubst %%.c,%%.o,$(wildcard *.c))\n%%.o: %%.c\n\tgcc -O2 -I%s -I%s -c $< -o $@\n' \
  "$src" "$build" >"$d/src/Makefile"
"$perfrec" record -q -g -e cpu-clock -F 2000 -o "$d/rec.prec" -- \
  "$perfrec" record --no-cut -g -e cpu-clock -F 2000 -o "$d/t.prec" -- make -C "$d/src" -j2 \
  >"$d/run.out" 2>&1 || fail "record: $(tail -5 "$d/run.out")"
[ "$(ls "$d"/src/*.o | wc -l)" = 6 ] || fail "the build did not finish: $(tail -5 "$d/run.out")"

"$analyze" export --format folded "$d/t.prec" >"$d/cut.folded" || fail "export failed"
"$analyze" export --format folded --no-cut "$d/t.prec" >"$d/raw.folded" || fail "export --no-cut failed"
"$analyze" info --json "$d/t.prec" >"$d/info.json" || fail "info failed"
cut_frames=$(json "$d/info.json" 'r["info"].get("cut_frames", 0)')
cut_chains=$(json "$d/info.json" 'r["info"].get("cut_chains", 0)')

# frames per file (weighted by count; [truncated] apart), longest stack,
# unnamed runs (two 0x... frames in a row), stacks ending in a repeat,
# misplaced or repeated [truncated] frames, stacks with one
stats() {
  awk '{ c = $NF; $NF = ""; sub(/ $/, ""); n = split($0, a, ";"); t = 0
         for (i = 1; i <= n; i++) {
           if (a[i] == "[truncated]") { t++; if (i != 2) bad++ }
           if (i > 1 && a[i] ~ /^0x/ && a[i - 1] ~ /^0x/) junk += c
         }
         if (t > 1) bad++
         if (n >= 3 && a[2] == a[3] && a[2] != "[truncated]") rep += c
         F += c * (n - t); T += c * (t > 0); if (n > m) m = n }
       END { printf "%d %d %d %d %d %d\n", F, m, junk, rep, bad, T }' "$1"
}
read -r cf cm cjunk crep cbad ct < <(stats "$d/cut.folded")
read -r rf rm rjunk rrep _ _ < <(stats "$d/raw.folded")
echo "--no-cut: $rf frames, deepest $rm, $rjunk samples with unnamed runs, $rrep ending in a repeat"
echo "default:  $cf frames, deepest $cm, $cjunk samples with unnamed runs, $crep ending in a repeat, $ct with [truncated]"
echo "info: cut_chains $cut_chains, cut_frames $cut_frames"
[ "$rjunk" -gt 0 ] || fail "no junk in the raw chains: the workload has frame pointers?"
[ "$cjunk" = 0 ] || fail "$cjunk samples still hold runs of unnamed addresses"
[ "$crep" = 0 ] || fail "$crep samples still end in a repeated frame"
[ "$cbad" = 0 ] || fail "$cbad stacks with a [truncated] frame that is not their one outermost"
[ "$cut_frames" -gt 0 ] && [ "$cut_frames" = $((rf - cf)) ] ||
  fail "info counts $cut_frames cut frames, the folded stacks differ by $((rf - cf))"
[ "$cut_chains" = "$ct" ] || fail "info counts $cut_chains cut chains, the folded stacks $ct"
"$analyze" info "$d/t.prec" | grep -E '^cut_frames +[1-9]' >/dev/null || fail "info's text shows no cut_frames"

# the recorder's cut
"$analyze" export --format folded "$d/rec.prec" >"$d/rcut.folded" || fail "export failed"
"$analyze" export --format folded --no-cut "$d/rec.prec" >"$d/rraw.folded" || fail "export --no-cut failed"
"$analyze" info --json "$d/rec.prec" >"$d/rinfo.json" || fail "info failed"
r_chains=$(json "$d/rinfo.json" 'r["info"].get("cut_chains", 0)')
read -r _ _ rcjunk rcrep rcbad rct < <(stats "$d/rcut.folded")
read -r _ _ rrjunk rrrep rrbad _ < <(stats "$d/rraw.folded")
echo "recorder: $rct with [truncated], info cut_chains $r_chains; --no-cut: $rrjunk samples with unnamed runs, $rrrep ending in a repeat"
[ "$rrjunk" -lt "$rjunk" ] && [ "$rrbad" = 0 ] ||
  fail "the recorder kept junk: $rrjunk unnamed runs, $rrrep repeated ends, $rrbad misplaced [truncated]"
[ "$rcjunk" = 0 ] && [ "$rcrep" = 0 ] && [ "$rcbad" = 0 ] || fail "junk left in the default view"
[ "$rct" -gt 0 ] && [ "$r_chains" = "$rct" ] ||
  fail "info counts $r_chains cut chains, the folded stacks $rct"
# per mille of cc1's samples with a [truncated] frame
cc1_cut() {
  awk '/^cc1;/ { c = $NF; t += c; if ($0 ~ /;\[truncated\]/) k += c }
       END { if (t < 200) print "few"; else printf "%d\n", k * 1000 / t }' "$1"
}
a=$(cc1_cut "$d/cut.folded")
b=$(cc1_cut "$d/rcut.folded")
c=$(cc1_cut "$d/rraw.folded")
echo "cc1 samples cut, per mille: analyzer $a, recorder $b (--no-cut view $c)"
[ "$a" != few ] && [ "$b" != few ] || fail "too few cc1 samples to compare"
[ $((a > b ? a - b : b - a)) -le 100 ] || fail "the recorder cuts $b per mille of cc1's samples, the analyzer $a"
[ "$c" -gt 0 ] && [ $((b - c)) -le 10 ] ||
  fail "the recorder cut $c per mille of cc1's samples itself, the analyzer $((b - c)) more"
echo "PASS"
