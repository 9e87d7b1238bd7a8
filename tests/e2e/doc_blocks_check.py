# SPDX-License-Identifier: GPL-2.0-only
"""Compare the generated blocks of two copies of a doc in shape: the
committed one and one just rewritten from a fresh run
(examples/model_server/doc.sh). Blocks sit between
"<!-- generated: SPEC -->" and "<!-- end generated -->".

What legitimately varies between two runs is normalised away:
  - numbers, with their unit if any (168ms, 1.06s, 213M, 22.1%) -> '#',
    hex -> 0x#; so a column whose unit changes with the value still matches;
  - a path -> its last component (temporary directories, the checkout);
  - runs of spaces (column widths follow the numbers).
Then, block by block (the same SPECs in the same order):
  - every line that is not a table row (section headers, column headings,
    the load lines, a report's notes), and every row of an unranked table
    (all alike once normalised: the slowest requests, the timeline), must
    be in both copies, as a set: a table may have more or fewer rows;
  - a ranked table, whose lower rows come and go between runs (the slow
    call sites; the files, where lazy imports open .pyc files), is held to
    the shape of its rows and to its top names: the doc's top K names must
    be among the fresh run's rows of the same table, and for the call sites
    the other way round too (the prose names the top three). Not for the
    files: on a loaded machine one .pyc read preempted for 17 ms came above
    the model file's 1,645 reads (load average 13 on the 2-vCPU VM).
Prints one line per difference; exit status 1 if any.

usage: doc_blocks_check.py COMMITTED FRESH
"""

import re
import sys

MARK = re.compile(r"^<!-- generated: (.*) -->$")
END = "<!-- end generated -->"
# Section header prefix -> (K, whether the fresh run's top K must be in the
# doc too, or only the doc's top K in the fresh run)
RANKED = {"Slow call sites": (3, True), "Files": (1, False)}
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:ns|us|ms|s|K|M|G|%)?(?![A-Za-z0-9])")
# a whole cell that is a number, after norm()
CELL = re.compile(r"^[+-]?#$")
# continuation lines of a wrapped call-site name start this far right
CONT_INDENT = 20


def norm(text):
    # record's summary: "N lost" gains a pointer to the report when N > 0
    text = text.replace(" (see 'latprof report')", "")
    text = re.sub(r"[^\s=]*/", "", text)
    text = re.sub(r"0x[0-9a-f]+", "0x#", text)
    text = NUMBER.sub("#", text)
    return " ".join(text.split())


def blocks(path):
    """[(spec, [lines between the fences])]"""
    out, cur = [], None
    for line in open(path):
        line = line.rstrip("\n")
        m = MARK.match(line)
        if m:
            cur = (m.group(1), [])
            out.append(cur)
        elif line == END:
            cur = None
        elif cur is not None and line != "```":
            cur[1].append(line)
    return out


def parse(lines):
    """(set of normalised plain lines, {(section, table, K): [[shape, name]]})
    A row starts with a number; in a ranked section its name runs on over
    the deeper-indented lines after it (a name wrapped mid-word: joined, then
    normalised). A plain line after rows ends a table (the idle waits are a
    second table under the call sites)."""
    plain, ranked = set(), {}
    section, table, rows = None, 0, None
    for line in lines:
        cells = norm(line).split(" ")
        if line and not line[0].isspace():
            section, table, rows = line, 0, None
        k = next((v for p, v in RANKED.items() if section and section.startswith(p)), None)
        if k is None or not line.strip():
            plain.add(norm(line))
            continue
        indent = len(line) - len(line.lstrip())
        if rows and indent >= CONT_INDENT and not CELL.match(cells[0]):
            rows[-1][1] += line.strip()
            continue
        n = 0
        while n < len(cells) and CELL.match(cells[n]):
            n += 1
        if n == 0:
            plain.add(norm(line))
            if rows:
                table, rows = table + 1, None
            continue
        rows = ranked.setdefault((section, table, k), [])
        words = line.split(None, n)
        rows.append([" ".join(cells[:n]), (words[n] if n < len(words) else "") + " "])
    for rows in ranked.values():
        for row in rows:
            row[1] = norm(row[1])
    return plain, ranked


def compare(spec, doc, fresh, problems):
    p_doc, r_doc = parse(doc)
    p_new, r_new = parse(fresh)
    for line in sorted(p_doc - p_new):
        problems.append("%s: only in the doc: %s" % (spec, line))
    for line in sorted(p_new - p_doc):
        problems.append("%s: only in the fresh run: %s" % (spec, line))
    for key in sorted(set(r_doc) | set(r_new), key=str):
        section, table, (k, both) = key
        where = "%s: %s (table %d)" % (spec, section.split(" (")[0], table + 1)
        a, b = r_doc.get(key, []), r_new.get(key, [])
        if not a or not b:
            problems.append("%s: rows only in the %s" % (where, "doc" if a else "fresh run"))
            continue
        if {s for s, _ in a} != {s for s, _ in b}:
            problems.append("%s: row shapes %s in the doc, %s in the fresh run" %
                            (where, sorted({s for s, _ in a}), sorted({s for s, _ in b})))
        # both ways only for a section's first table: the doc's second
        # (the idle waits) holds one row, a fresh run may have two
        for top, other, label in ((a, b, "doc"), (b, a, "fresh run"))[:2 if both and not table else 1]:
            names = {n for _, n in other}
            for _, name in top[:k]:
                if name not in names:
                    problems.append("%s: the %s's top %d has \"%s\", the other not" %
                                    (where, label, k, name.strip()))


def main():
    doc, fresh = blocks(sys.argv[1]), blocks(sys.argv[2])
    problems = []
    if [s for s, _ in doc] != [s for s, _ in fresh]:
        problems.append("blocks differ: %s in the doc, %s in the fresh run" %
                        ([s for s, _ in doc], [s for s, _ in fresh]))
    else:
        for (spec, a), (_, b) in zip(doc, fresh):
            compare(spec, a, b, problems)
    for p in problems:
        print(p)
    print("%d blocks, %d differences" % (len(doc), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
