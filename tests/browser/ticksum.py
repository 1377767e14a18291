#!/usr/bin/env python3
"""ticksum.py - a page's counter groups under a time range against the
analyzer's ticks.

    ticksum.py DOM CSV A B

DOM is a document dumped by chromium (--dump-dom) of a page opened with
the time range [A, B) (ns from the trace start) selected; CSV is
`perfrec-analyze counters --interval --csv` of the same trace. Each row
of the page's counters table must show, as Scaled, the sum of the deltas
of that counter's ticks whose time falls in the range (whole ticks), and
as Per second that sum over the time those ticks cover (each tick's
interval runs from the counter's previous tick, the first from the
trace start): within 0.01%, the CSV's times being rounded to the
microsecond. A tick within 2 us of A or B cannot be placed from the CSV:
that is reported as a failure of the test's range, not of the page.
Prints one line per row, exits 1 on the first difference.
"""
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
from tablecmp import Tables, csv_section  # noqa: E402


def main(argv):
    dom, csvp, a, b = argv[1], argv[2], int(argv[3]), int(argv[4])
    p = Tables('counters', 'counters')
    with open(dom) as f:
        p.feed(f.read())
    if not p.rows:
        print('%s: no counters rows in the page' % dom)
        return 1
    sums, prev = {}, {}
    for r in csv_section(csvp, 'intervals'):
        key = (r['group'], r['event'])
        t = round(float(r['time_s']) * 1e9)
        start = prev.get(key, 0)
        prev[key] = t
        if min(abs(t - a), abs(t - b)) < 2000:
            print('%s %s: a tick at %d ns, too near the range [%d, %d) to place' %
                  (key[0], key[1], t, a, b))
            return 1
        if not a <= t < b or r['delta'] == '<not counted>':
            continue
        s = sums.setdefault(key, [0, 0])
        s[0] += int(r['delta'])
        s[1] += t - start
    for r in p.rows:
        key = (r['group'], r['event'])
        if key not in sums:
            print('%s %s: no tick of the analyzer in the range' % key)
            return 1
        total, span = sums[key]
        rate = total * 1e9 / span
        got_rate = float(r['per_sec'])
        if int(r['scaled']) != total or abs(got_rate - rate) > 1e-4 * rate:
            print('%s %s: page %s (%s/s), the ticks in the range %d (%.2f/s)' %
                  (key[0], key[1], r['scaled'], r['per_sec'], total, rate))
            return 1
        print('%s %s: %s in the range (%s/s), the sum of the analyzer\'s ticks' %
              (key[0], key[1], r['scaled'], r['per_sec']))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
