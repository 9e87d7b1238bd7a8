#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The shape of src/ (issue 15, docs/design.md "Sessions and options"):
#   - no include circle between modules (a module: NAME.c + NAME.h, and the
#     files that share its private header NAME_priv.h; or every file of a
#     directory src/NAME/, as src/collect/ with its private header
#     src/collect/priv.h, which no other module includes; an edge X -> Y
#     when a file of X includes "src/Y.h" or "src/Y/...");
#   - verb files (src/cmd_*.c) have no header and no other file includes
#     one: what another verb needs lives in a module of its own;
#   - layers, bottom up: src/lib/ (util, strtab, hashmap) includes nothing
#     of the project but itself; the libraries symbolize/ and flamegraph/
#     include nothing from src/ but src/lib/ (STYLE.md);
#   - one caller of the BPF session's open and attach: src/session.c;
#   - project headers are included by their path from the root ("src/x.h"),
#     never by a bare name the graph would not see.
# Ground truth: the #include lines and calls in the tree itself.
. "$(dirname "$0")/lib.sh"

/usr/bin/python3 - "$_lib_dir/../.." <<'PYEOF' || fail "the module graph has a problem (above)"
import os, re, sys
root = sys.argv[1]
inc = re.compile(r'^#include "([^"]+)"', re.M)
bad = []
graph = {}
def module(name, text):
    """NAME of NAME.c/NAME.h; a file including src/M_priv.h belongs to M;
    a file of a directory src/D/ belongs to D."""
    if "/" in name:
        return name.split("/")[0]
    if name.endswith("_priv.h"):
        return name[:-7]
    for path in inc.findall(text):
        if path.endswith("_priv.h"):
            return path[4:-7]
    return name[:-2]
def target(path):
    """The module of included header "src/...": Y of src/Y.h and of src/Y/X.h."""
    rel = path[4:]
    return rel.split("/")[0] if "/" in rel else rel[:-2]
# src/*.c|h, and the files of its directories (src/collect/): paths below src/
names = []
for name in sorted(os.listdir(os.path.join(root, "src"))):
    if os.path.isdir(os.path.join(root, "src", name)):
        names += [name + "/" + n for n in sorted(os.listdir(os.path.join(root, "src", name)))
                  if n.endswith((".c", ".h"))]
    elif name.endswith((".c", ".h")):
        names.append(name)
for name in names:
    text = open(os.path.join(root, "src", name)).read()
    mod = module(name, text)
    for path in inc.findall(text):
        if name.startswith("lib/") and not path.startswith("src/lib/"):
            bad.append("the bottom layer src/%s includes %s" % (name, path))
        if path.endswith("_priv.h"):
            continue
        if path.startswith("src/") and path.endswith("/priv.h"):
            if target(path) != mod:
                bad.append("src/%s includes %s, private to module %s" % (name, path, target(path)))
            continue
        if path.startswith("src/cmd_"):
            bad.append("src/%s includes the verb file %s" % (name, path))
        if path.startswith("src/") and path.endswith(".h") and target(path) != mod:
            graph.setdefault(mod, set()).add(target(path))
    if name.startswith("cmd_") and name.endswith(".h"):
        bad.append("verb file with a header: src/%s" % name)
    if name != "session.c" and mod != "collect" and re.search(r'\bcollect_(open|attach)\s*\(', text) \
       and not name.endswith(".h"):
        bad.append("src/%s calls collect_open/collect_attach (only src/session.c may)" % name)
for lib in ("symbolize", "flamegraph"):
    for name in sorted(os.listdir(os.path.join(root, lib))):
        if name.endswith((".c", ".h")):
            for path in inc.findall(open(os.path.join(root, lib, name)).read()):
                if path.startswith("src/") and not path.startswith("src/lib/"):
                    bad.append("%s/%s includes %s" % (lib, name, path))
# bare includes of project headers: invisible to the rules above
project = set()
for d in ("src", "src/lib", "src/collect", "symbolize", "flamegraph"):
    project |= {n for n in os.listdir(os.path.join(root, d)) if n.endswith(".h")}
for d in ("src", "src/lib", "src/collect", "symbolize", "flamegraph"):
    for name in sorted(os.listdir(os.path.join(root, d))):
        if name.endswith((".c", ".h")):
            for path in inc.findall(open(os.path.join(root, d, name)).read()):
                if "/" not in path and path in project:
                    bad.append("%s/%s includes \"%s\" by a bare name" % (d, name, path))
# cycles: depth-first search, reporting each circle once
state, stack = {}, []
def visit(m):
    state[m] = 1
    stack.append(m)
    for n in sorted(graph.get(m, ())):
        if state.get(n) == 1:
            bad.append("include circle: " + " -> ".join(stack[stack.index(n):] + [n]))
        elif not state.get(n):
            visit(n)
    stack.pop()
    state[m] = 2
for m in sorted(graph):
    if not state.get(m):
        visit(m)
for b in bad:
    print("  " + b)
print("  %d modules, %d include edges" % (len(graph), sum(len(v) for v in graph.values())))
sys.exit(1 if bad else 0)
PYEOF
pass "src/ has no include circle, no included verb file; the libraries keep to src/lib/; one session opener"
