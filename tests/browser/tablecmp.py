#!/usr/bin/env python3
"""tablecmp.py - a table of a page's document against the analyzer's CSV.

    tablecmp.py DOM DOC SECTION CSV KEYS [COL=TOL ...] [--rows N] [--cover COL=MIN]

DOM is a document dumped by chromium (--dump-dom), DOC the data-doc name
of the table's block (report, sched, offcpu), SECTION its data-section
(rows, tasks); CSV the same command's --csv output, whose "# SECTION"
part has the same column names (the page's th data-col). KEYS, comma
separated, identify a row. Each COL=TOL compares that column: the page's
value (a trailing % cut) must be within TOL of the CSV's (0: equal).
With --rows N, the page must show min(N, CSV rows) rows; with --cover
COL=MIN, every CSV row whose COL is at least MIN (a page whose flame
trees were pruned lists only the functions of the boxes it kept).

Every page row must be a CSV row. Prints one line per table, exits 1 on
the first difference, naming it.
"""
import csv
import html.parser
import io
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
    rows_want, cover = None, None
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
    want = {tuple(r[k] for k in keys): r for r in csv_section(csvp, section)}
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
            if float(r[cover[0]]) >= float(cover[1]) and k not in shown:
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
