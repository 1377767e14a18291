#!/usr/bin/env bash
# The include graph of format/, recorder/ and analyzer/, checked for what DESIGN.md
# ("Dependency direction") and STYLE.md ("Chains, not circles") forbid:
#
#   circle  files of a folder that include each other round a loop. A file
#           pair (x.c, x.h, x_int.h) is one node, so a pair is never a
#           circle; two pairs that include each other are (e.g. frame.c
#           including reader.h while reader.c includes frame_int.h).
#   up      an include that runs against the layering:
#           - format/ never includes recorder/ or analyzer/;
#           - format/base/ includes nothing of the tree outside format/base/;
#           - under recorder/, only cli/ includes cli/ (cli/ sits on top);
#           - recorder/events/ never includes bpf/ or encode/;
#           - recording/, ring/, encode/, events/, symbols/ and bpf/ never
#             include daemon/ or net/ (those drive recording/ objects);
#           - analyzer/ never includes recorder/; its folders stack as
#             symbols/ (symbol tables), read/ (decoding), reports/, render/,
#             query/, load/, main.c: none includes a folder above it, except
#             that reports/ print through render/'s writers (table.h,
#             calltree.h, stree.h), which include no report.
#
# Given a build directory, the same two checks run on calls as well: an
# object file that uses a symbol another one defines (nm) calls it, which
# finds the circles a shared x_int.h hides from the include graph
# ("calls" and "calls-up" findings).
#
# Findings listed in tests/include-graph.allow (today's known ones, each
# with the step that removes it) pass; anything else fails (exit 1). An
# allowed finding that is gone is told, so its line can be deleted.
# Usage: tests/include-graph.sh [SOURCE_DIR [BUILD_DIR]]
# (INCLUDE_GRAPH_VERBOSE=1 prints every include)
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
build=${2:-}
verbose=${INCLUDE_GRAPH_VERBOSE:-0}
exec python3 - "$src" "$verbose" "$build" <<'EOF'
import os, re, subprocess, sys

src, verbose, build = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
allow_path = os.path.join(src, "tests", "include-graph.allow")
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

files = []
for top in ("format", "recorder", "analyzer"):
    for d, _, names in os.walk(os.path.join(src, top)):
        for n in names:
            if n.endswith((".c", ".h")):
                files.append(os.path.relpath(os.path.join(d, n), src))
fileset = set(files)

def resolve(frm, inc):
    """Tree path of an include, or None (system, generated)."""
    for cand in (inc, os.path.join(os.path.dirname(frm), inc)):
        cand = os.path.normpath(cand)
        if cand in fileset:
            return cand
    return None

def node(path):
    """A file pair is one node: x.c, x.h and x_int.h are 'dir/x'."""
    base = re.sub(r"\.(c|h)$", "", path)
    return re.sub(r"_int$", "", base)

edges = {}      # (from file, to file)
for f in files:
    with open(os.path.join(src, f), errors="replace") as fh:
        for line in fh:
            m = inc_re.match(line)
            if m:
                to = resolve(f, m.group(1))
                if to and to != f:
                    edges[(f, to)] = True

# render/'s writers, which reports/ print through (below every report)
ANALYZER_WRITERS = {"analyzer/render/table", "analyzer/render/calltree",
                    "analyzer/render/stree"}

def upward(a, b):
    fa, fb = a.split("/"), b.split("/")
    if fa[0] == "format":
        if fb[0] in ("recorder", "analyzer"):
            return True
        if fa[1] == "base" and fb[:2] != ["format", "base"]:
            return True
        return False
    if fa[0] == "analyzer":
        if fb[0] == "recorder":
            return True
        if fb[0] != "analyzer":
            return False
        # analyzer/<folder>/...; main.c (folder '') sits on top
        da = fa[1] if len(fa) > 2 else ""
        db = fb[1] if len(fb) > 2 else ""
        if da == db:
            return False
        rank = {"symbols": 0, "read": 1, "reports": 2, "render": 3,
                "query": 4, "load": 5, "": 6}
        if da == "reports" and node(b) in ANALYZER_WRITERS:
            return False
        return rank.get(db, 6) >= rank.get(da, 6)
    # recorder/<folder>/... ; files directly in recorder/ count as folder ''
    da = fa[1] if len(fa) > 2 else ""
    db = fb[1] if fb[0] == "recorder" and len(fb) > 2 else ""
    if fb[0] != "recorder":
        return fb[0] == "analyzer"
    if db == "cli" and da != "cli":
        return True
    if da == "events" and db in ("bpf", "encode"):
        return True
    if da in ("recording", "ring", "encode", "events", "symbols", "bpf", "") \
            and db in ("daemon", "net"):
        return True
    return False

found = set()
for (a, b) in edges:
    if upward(a, b):
        found.add("up %s %s" % (a, b))

def circles(pairs):
    """Strongly connected components of more than one node (Tarjan)."""
    graph = {}
    for (na, nb) in pairs:
        if na != nb:
            graph.setdefault(na, set()).add(nb)
            graph.setdefault(nb, set())
    index, low, stack, on, sccs = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)
    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v); on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sccs

for comp in circles((node(a), node(b)) for (a, b) in edges):
    found.add("circle " + " ".join(comp))

# calls: object files of format/, recorder/ and analyzer/ in the build tree
calls = set()
if build:
    defs, uses = {}, {}
    for top in ("format", "recorder", "analyzer"):
        for d, _, names in os.walk(os.path.join(build, top)):
            for n in names:
                m = re.search(r"CMakeFiles/[^/]+\.dir/(.*)\.c\.o$",
                              os.path.join(d, n))
                # an object whose source is gone (a build tree of an older
                # layout) says nothing about today's tree
                if not m or top + "/" + m.group(1) + ".c" not in fileset:
                    continue
                me = node(top + "/" + m.group(1) + ".c")
                out = subprocess.run(["nm", "-g", os.path.join(d, n)],
                                     capture_output=True, text=True,
                                     check=True).stdout
                for line in out.splitlines():
                    f = line.split()
                    if len(f) == 3 and f[1] in "TDBRCV":
                        defs[f[2]] = me
                    elif len(f) == 2 and f[0] == "U":
                        uses.setdefault(me, set()).add(f[1])
    if not defs:
        sys.exit("include-graph: no object files of format/, recorder/, analyzer/ under " + build)
    for me, syms in uses.items():
        for sym in syms:
            if sym in defs and defs[sym] != me:
                calls.add((me, defs[sym]))
    for (a, b) in calls:
        if upward(a, b):
            found.add("calls-up %s %s" % (a, b))
    for comp in circles(calls):
        found.add("calls " + " ".join(comp))

if verbose:
    for (a, b) in sorted(edges):
        print("edge %s -> %s" % (a, b))

allowed = {}
if os.path.exists(allow_path):
    with open(allow_path) as fh:
        for n, line in enumerate(fh, 1):
            text = line.split("#", 1)[0].strip()
            if text:
                allowed[" ".join(text.split())] = n

bad = sorted(f for f in found if f not in allowed)
# without a build directory the call findings are not looked for
gone = sorted(a for a in allowed if a not in found
              and (build or not a.startswith("calls")))
for f in bad:
    print("include-graph: NEW %s" % f)
for g in gone:
    print("include-graph: gone, delete line %d of tests/include-graph.allow: %s"
          % (allowed[g], g))
print("include-graph: %d files, %d includes, %d calls between file pairs, "
      "%d allowed findings, %d new"
      % (len(files), len(edges), len(calls), len(found) - len(bad), len(bad)))
sys.exit(1 if bad else 0)
EOF
