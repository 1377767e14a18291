#!/usr/bin/env python3
"""perfshape.py - readers of perf's text outputs for tests/kernel/test_perfshape.sh.

  perfshape.py trees FILE     the trees of `report -g` (ours or perf's
                              --stdio): one line per entry, "SYM<TAB>names",
                              the names of its tree in print order
  perfshape.py fold FILE COMM perf script's layout folded as FlameGraph's
                              stackcollapse-perf.pl folds it (comm, frames
                              outermost first, "+0x.." dropped, "[unknown]"
                              as "[dso]", the first event only), the
                              samples of COMM: "share<TAB>stack" per stack,
                              weighted by sample count; it exits 1 on a line
                              stackcollapse-perf.pl would not recognize
"""
import re
import sys

# perf: "  99.58%  0.00%  calltree  calltree  [.] calltree_round" (no
# command column under --comms)
PERF_ENTRY = re.compile(r'^\s+[\d.]+%\s+[\d.]+%\s+(?:\S+\s+)?\S+\s+\[.\]\s+(.+)$')
# ours: "  99.83%   0.00%   0   0  calltree  calltree  calltree_round"
OUR_ENTRY = re.compile(r'^\s+[\d.]+%\s+[\d.]+%\s+\d+\s+\d+\s+\S+\s+\S+\s+(.+)$')
# a tree line: margin, bars, an optional "--P%--" or "---", the name
TREE = re.compile(r'^ {12}[ |]*(?:--([\d.]+)%--|---)?(\S.*)$')


def trees(path):
    out, cur = [], None
    for line in open(path, encoding='utf-8', errors='replace'):
        line = line.rstrip('\n')
        m = PERF_ENTRY.match(line) or OUR_ENTRY.match(line)
        if m and not line.startswith(' ' * 12):
            cur = [m.group(1).strip(), []]
            out.append(cur)
            continue
        t = TREE.match(line)
        if cur and t and t.group(2).strip() not in ('', '|'):
            cur[1].append(t.group(2).strip())
    for sym, names in out:
        print(sym + '\t' + ' '.join(names))


HEAD = re.compile(r'^(\S.+?)\s+(\d+)/*(\d+)*\s+')
EVENT = re.compile(r':\s*(\d+)*\s+(\S+):\s*$')
FRAME = re.compile(r'^\s*(\w+)\s*(.+) \((.*)\)')


def fold(path, comm):
    counts, stack, name, first = {}, [], None, None
    lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
    for line in lines + ['']:
        if line.startswith('#'):
            continue
        if line == '':
            if name is not None and stack:
                key = ';'.join([name] + stack)
                counts[key] = counts.get(key, 0) + 1
            stack, name = [], None
            continue
        h = HEAD.match(line)
        if h:
            e = EVENT.search(line)
            ev = e.group(2) if e else None
            first = first or ev
            name = h.group(1).replace(' ', '_') if ev == first else None
            continue
        f = FRAME.match(line)
        if not f:
            print('unrecognized line: ' + line, file=sys.stderr)
            sys.exit(1)
        func, mod = re.sub(r'\+0x[\da-f]+$', '', f.group(2)), f.group(3)
        if func == '[unknown]':
            func = '[' + mod.rsplit('/', 1)[-1] + ']' if mod != '[unknown]' else '[unknown]'
        stack.insert(0, func)
    mine = {k: v for k, v in counts.items() if k.split(';', 1)[0] == comm}
    total = sum(mine.values())
    for k, v in sorted(mine.items(), key=lambda kv: -kv[1]):
        print('%.2f\t%s' % (100.0 * v / total, k))


if __name__ == '__main__':
    if sys.argv[1] == 'trees':
        trees(sys.argv[2])
    else:
        fold(sys.argv[2], sys.argv[3])
