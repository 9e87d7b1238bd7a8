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
#     never by a bare name the graph would not see, nor through "..";
#   - bpf/ (issue 31): user space includes only its ABI, bpf/latprof.h,
#     which includes no other project header; each .bpf.h includes
#     common.bpf.h (itself only latprof.h) and no .bpf.c; the .bpf.h
#     include graph has no circle; a header declares (extern) and never
#     defines a map, a global, a program or a mutable static (its
#     statements are read, comments and preprocessor lines out); every
#     map and global is
#     defined in one .bpf.c; programs are on_<hook> and no helper starts
#     with on_ (STYLE.md), so bpftool's and bpf_stats' names are programs.
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
# bpf/: layers and definitions
def statements(text):
    """The file-scope statements of C @text (comments and preprocessor lines
    out), each with the bodies of the functions it defines: (text, bodies)."""
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    text = re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', ' ', text, flags=re.M)
    out, cur, depth, body = [], [], 0, None
    for ch in text:
        cur.append(ch)
        if ch == '{':
            if depth == 0:
                head = ''.join(cur[:-1])
                body = [] if re.search(r'\)\s*$', head) else None
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0 and body is not None:
                out.append((''.join(cur).strip(), ''.join(cur)[len(head):]))
                cur, body = [], None
        elif ch == ';' and depth == 0:
            out.append((''.join(cur).strip(), ''))
            cur = []
    return out
def header_defines(stmt):
    """What statement @stmt of a header defines ('' when it only declares)."""
    t = ' '.join(stmt.split())
    if not t or t == ';' or t.startswith(('extern ', '_Static_assert')):
        return ''
    if re.search(r'\)\s*\{', t) and t.endswith('}'):		# a function
        return '' if t.startswith('static ') else 'the function ' + t.split('(')[0]
    if 'SEC(' in t:
        return 'the map or program ' + t
    init = '=' in t and ('{' not in t or t.index('=') < t.index('{'))
    if t.startswith(('struct ', 'union ', 'enum ', 'typedef ')) and not init:
        after = t[t.rindex('}') + 1:] if '{' in t else t.split(None, 2)[2] if len(t.split()) > 2 else ''
        after = after.rstrip(';').strip()
        return '' if not after or t.startswith('typedef ') else 'a variable ' + t
    if '(' in t and '=' not in t:					# a prototype
        return ''
    return 'a variable ' + t
bpfdir = os.path.join(root, "bpf")
bpf_graph = {}
defined = {}
prog_prefix = re.compile(r'^on_')
for name in sorted(os.listdir(bpfdir)):
    if not name.endswith((".c", ".h")):
        continue
    text = open(os.path.join(bpfdir, name)).read()
    incs = inc.findall(text)
    if name == "latprof.h":
        for path in incs:
            bad.append("bpf/latprof.h (the ABI) includes %s" % path)
        continue
    for path in incs:
        if path.endswith(".bpf.c"):
            bad.append("bpf/%s includes the program file %s" % (name, path))
        if path.endswith(".bpf.h"):
            bpf_graph.setdefault(name, set()).add(path)
    if name.endswith(".bpf.h") and name != "common.bpf.h" and "common.bpf.h" not in incs:
        bad.append("bpf/%s does not include common.bpf.h" % name)
    if name == "common.bpf.h" and [p for p in incs if p != "latprof.h" and p != "vmlinux.h"]:
        bad.append("bpf/common.bpf.h includes more than latprof.h")
    # file-scope definitions: maps (named or anonymous types), globals, programs
    defs = re.findall(r'^(?!extern\b)(?:struct \w+ |\} ?)(\w+) SEC\("\.maps"\);', text, re.M)
    defs += re.findall(r'^(?!extern\b)(?:const volatile )?(?:__[us]\d+|char|bool) (\w+)(?:\[[^\]]*\])* = ', text, re.M)
    progs = re.findall(r'^SEC\("[^"]+"\)\n(?:int|long) (?:BPF_PROG\()?(\w+)', text, re.M)
    if len(progs) != len(re.findall(r'^SEC\("(?!\.maps|license)', text, re.M)):
        bad.append("bpf/%s: a program this test cannot read the name of" % name)
    for p in progs:
        if not prog_prefix.match(p):
            bad.append("bpf/%s: program %s is not named on_<hook>" % (name, p))
    stmts = statements(text)
    if name.endswith(".h"):
        for st, fbody in stmts:
            what = header_defines(st)
            if what:
                bad.append("bpf/%s defines %s (a header declares; a .bpf.c defines)"
                           % (name, what[:100]))
            if re.search(r'\bstatic\s+(?!const\b)', fbody):
                bad.append("bpf/%s: a mutable static inside a function (a global of each includer)"
                           % name)
    else:
        for d in defs:
            if d in defined:
                bad.append("%s defined in bpf/%s and bpf/%s" % (d, defined[d], name))
            defined[d] = name
    for st, fbody in stmts:
        m = re.match(r'(?:[\w ]+?\**)\b(\w+)\s*\(', ' '.join(st.split()))
        if fbody and m and prog_prefix.match(m.group(1)) and 'SEC(' not in st:
            bad.append("bpf/%s: helper %s is named like a program" % (name, m.group(1)))
for d in ("src", "src/lib", "src/collect", "symbolize", "flamegraph", "bpf"):
    for name in sorted(os.listdir(os.path.join(root, d))):
        if name.endswith((".c", ".h")):
            for path in inc.findall(open(os.path.join(root, d, name)).read()):
                if ".." in path.split("/"):
                    bad.append("%s/%s includes %s: a path around the rules" % (d, name, path))
                if d != "bpf" and path.startswith("bpf/") and path != "bpf/latprof.h":
                    bad.append("%s/%s includes %s (user space sees only bpf/latprof.h)" % (d, name, path))
state.clear()
def bpf_visit(m, stack):
    state[m] = 1
    for n in sorted(bpf_graph.get(m, ())):
        if state.get(n) == 1:
            bad.append("bpf include circle: " + " -> ".join(stack[stack.index(n):] + [n]))
        elif not state.get(n):
            bpf_visit(n, stack + [n])
    state[m] = 2
for m in sorted(bpf_graph):
    if not state.get(m):
        bpf_visit(m, [m])
for b in bad:
    print("  " + b)
print("  %d modules, %d include edges; bpf/: %d include edges, %d maps and globals defined"
      % (len(graph), sum(len(v) for v in graph.values()),
         sum(len(v) for v in bpf_graph.values()), len(defined)))
sys.exit(1 if bad else 0)
PYEOF
pass "src/ has no include circle, no included verb file; the libraries keep to src/lib/; one session opener; bpf/ headers only declare"
