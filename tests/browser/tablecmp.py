#!/usr/bin/env python3
"""tablecmp.py - a table of a page's document against the analyzer's CSV.

    tablecmp.py DOM DOC SECTION CSV KEYS [COL=TOL ...] [--rows N] [--cover COL=MIN]
                [--group]

DOM is a document dumped by chromium (--dump-dom), DOC the data-doc name
of the table's block (report, sched, offcpu), SECTION its data-section
(rows, tasks); CSV the same command's --csv output, whose "# SECTION"
part has the same column names (the page's th data-col). KEYS, comma
separated, identify a row. Each COL=TOL compares that column: the page's
value (a trailing % cut) must be within TOL of the CSV's (0: equal).
With --rows N, the page must show min(N, CSV rows) rows; with --cover
COL=MIN, every CSV row whose COL is at least MIN (a page whose flame
trees were pruned lists only the functions of the boxes it kept).
With --group, the CSV's rows of addresses (code without symbols) are
first grouped per object as the page groups them ("[unknown] in OBJ":
samples and period summed, self recomputed, children between the
largest part's and the sum).

Every page row must be a CSV row. Prints one line per table, exits 1 on
the first difference, naming it.
"""
import csv
import html.parser
import io
import re
import sys


class Tables(html.parser.HTMLParser):
    """The rows of <table data-section=SECTION> inside <div data-doc=DOC>."""

    def __init__(self, doc, section):
        super().__init__()
        self.doc, self.section = doc, section
        self.depth = 0          # div nesting inside the block; 0: outside
        self.in_table = False
        self.cols, self.rows = [], []
        self.cell = None
        self.selected = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'div':
            if self.depth:
                self.depth += 1
            elif a.get('data-doc') == self.doc:
                self.depth = 1
        elif tag == 'table' and self.depth and a.get('data-section') == self.section:
            self.in_table = True
            self.selected = a.get('data-selected')
        elif self.in_table and tag == 'th':
            self.cols.append(a.get('data-col'))
        elif self.in_table and tag == 'tr':
            self.row = []
        elif self.in_table and tag == 'td':
            self.cell = ''

    def handle_endtag(self, tag):
        if tag == 'div' and self.depth:
            self.depth -= 1
        elif tag == 'table':
            self.in_table = False
        elif self.in_table and tag == 'td' and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif self.in_table and tag == 'tr' and self.row:
            self.rows.append(dict(zip(self.cols, self.row)))
            self.row = []

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def unknown_in(sym, dso):
    """The object of an analyzer row whose symbol is an address
    ("[obj]+0x1f", "[kernel.kallsyms]+0x1f", "0x7f..." of object
    "[unknown]": then ''), else None."""
    if dso == '[unknown]':
        return '' if re.fullmatch(r'0x[0-9a-f]+', sym) else None
    pre = (dso if dso.startswith('[') else '[' + dso + ']') + '+0x'
    return dso if sym.startswith(pre) and re.fullmatch(r'[0-9a-f]+', sym[len(pre):]) else None


def group_unknown(rows, total):
    """The page's rows of code without symbols: one "[unknown] in OBJ"
    per object (and event), samples and period summed, self recomputed;
    children known only between the largest part's and their sum (a
    stack through two addresses counts once): kept as children_lo and
    children_hi, children itself dropped."""
    out, groups = [], {}
    for r in rows:
        obj = unknown_in(r.get('sym', ''), r.get('dso', ''))
        if obj is None:
            out.append(r)
            continue
        name = '[unknown] in ' + obj if obj else '[unknown]'
        key = (name, r['dso'], r.get('event'))
        g = groups.get(key)
        if g is None:
            g = groups[key] = dict(r, sym=name, children_lo=float(r['children']),
                                   children_hi=0.0, children=None)
            out.append(g)
            g['samples'] = g['period'] = '0'
        g['samples'] = str(int(g['samples']) + int(r['samples']))
        g['period'] = str(int(g['period']) + int(r['period']))
        g['children_lo'] = max(g['children_lo'], float(r['children']))
        g['children_hi'] += float(r['children'])
    for g in groups.values():
        g['overhead'] = '%.2f' % (100.0 * int(g['period']) / total if total else 0)
    return out


def csv_section(path, section):
    text, on = [], False
    with open(path) as f:
        for line in f:
            if line.startswith('# '):
                on = line[2:].strip() == section
                continue
            if on and line.strip():
                text.append(line)
    return list(csv.DictReader(io.StringIO(''.join(text))))


def main(argv):
    rows_want, cover, group = None, None, '--group' in argv
    if group:
        argv.remove('--group')
    if '--rows' in argv:
        i = argv.index('--rows')
        rows_want = int(argv[i + 1])
        del argv[i:i + 2]
    if '--cover' in argv:
        i = argv.index('--cover')
        cover = argv[i + 1].split('=')
        del argv[i:i + 2]
    dom, doc, section, csvp, keys = argv[1:6]
    tols = dict(a.split('=') for a in argv[6:])
    keys = keys.split(',')
    p = Tables(doc, section)
    with open(dom) as f:
        p.feed(f.read())
    rows = csv_section(csvp, section)
    if group:
        summary = {r['key']: r['value'] for r in csv_section(csvp, 'summary')}
        rows = group_unknown(rows, int(summary.get('total_period', 0)))
    want = {tuple(r[k] for k in keys): r for r in rows}
    what = '%s %s of %s' % (doc, section, dom.rsplit('/', 1)[-1])
    if not p.rows:
        print('%s: no rows in the page' % what)
        return 1
    if rows_want is not None and len(p.rows) != min(rows_want, len(want)):
        print('%s: %d rows, the analyzer has %d (top %d)' %
              (what, len(p.rows), len(want), rows_want))
        return 1
    if cover:
        shown = {tuple(r.get(c) for c in keys) for r in p.rows}
        for k, r in want.items():
            v = r[cover[0]] if r.get(cover[0]) is not None else r['children_lo']
            if float(v) >= float(cover[1]) and k not in shown:
                print('%s: %s (%s %s) is not on the page' % (what, k, cover[0], r[cover[0]]))
                return 1
    worst = {}
    for r in p.rows:
        k = tuple(r.get(c) for c in keys)
        if k not in want:
            print('%s: %s is not in the analyzer\'s rows' % (what, k))
            return 1
        for col, tol in tols.items():
            got = float(r[col].rstrip('%'))
            if want[k].get(col) is None:   # a group's children: within its bounds
                lo, hi = want[k]['children_lo'], want[k]['children_hi']
                if not lo - float(tol) - 0.01 <= got <= hi + float(tol) + 0.01:
                    print('%s: %s %s: page %s, analyzer between %.2f and %.2f' %
                          (what, k, col, r[col], lo, hi))
                    return 1
                continue
            exp = float(want[k][col])
            if abs(got - exp) > float(tol):
                print('%s: %s %s: page %s, analyzer %s (tolerance %s)' %
                      (what, k, col, r[col], want[k][col], tol))
                return 1
            worst[col] = max(worst.get(col, 0), abs(got - exp))
    print('%s: %d rows (data-selected=%s) equal to the analyzer\'s; largest differences %s' %
          (what, len(p.rows), p.selected, worst))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
