#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every option the docs give a verb is one that verb's --help lists.

usage: docs_options_check.py LATPROF MANPAGE MD...

Sources of "verb V takes --opt":
  - the man page's SYNOPSIS line of V (`.B latprof V` up to `.br`);
  - the item headers (the line after `.TP`) of RECORD OPTIONS (record) and
    EXPORT OPTIONS (export), and the whole SERVE and TOP sections (serve, top);
  - in the Markdown files, every `latprof V ...` command, up to a `--`
    that starts a command (options after it are the command's).
Prints one "FILE:LINE: latprof V --opt: not in `latprof V --help`" line per
mismatch and exits 1 if there is any; prints how much it checked otherwise.
"""
import re
import subprocess
import sys

VERBS = ('record', 'report', 'export', 'flamegraph', 'diff', 'timeline', 'serve', 'symbolize',
         'top')
LONG = re.compile(r'(?<![\w/-])--[a-z][a-z0-9-]*')
# man sections whose option items belong to one verb; True: the whole text
SECTIONS = {'RECORD OPTIONS': ('record', False), 'EXPORT OPTIONS': ('export', False),
            'SERVE': ('serve', True), 'TOP': ('top', True)}


def help_options(latprof, verb):
    r = subprocess.run([latprof, verb, '--help'], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        sys.exit(f'{latprof} {verb} --help exited {r.returncode}')
    return set(LONG.findall(r.stdout + r.stderr))


def man_options(path):
    """(verb, option, line number) of every option the man page gives a verb."""
    out = []
    sec, verb, after_tp = None, None, False

    for n, raw in enumerate(open(path), 1):
        line = re.sub(r'\\f[BIRP]', '', raw.replace('\\-', '-'))
        if line.startswith('.SH'):
            sec, verb, after_tp = line[3:].strip().strip('"'), None, False
            continue
        if sec == 'SYNOPSIS':
            m = re.match(r'\.B latprof (\w+)', line)
            if m:
                verb = m.group(1) if m.group(1) in VERBS else None
                continue
            if line.startswith('.br'):
                verb = None
            elif verb:
                out += [(verb, o, n) for o in LONG.findall(line)]
        elif sec in SECTIONS:
            v, whole = SECTIONS[sec]
            if line.startswith('.TP'):
                after_tp = True
                continue
            if whole or after_tp:
                out += [(v, o, n) for o in LONG.findall(line)]
            after_tp = False
    return out


def md_options(path):
    """(verb, option, line number) of every `latprof VERB ...` command."""
    out = []
    verbs = '|'.join(VERBS)

    for n, line in enumerate(open(path), 1):
        for m in re.finditer(r'latprof (' + verbs + r')\b([^`|\n]*)', line):
            args = re.split(r'\s--\s', m.group(2) + ' ')[0]
            out += [(m.group(1), o, n) for o in LONG.findall(args)]
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    latprof, man, mds = sys.argv[1], sys.argv[2], sys.argv[3:]
    have = {v: help_options(latprof, v) for v in VERBS}
    bad = checked = 0

    for path, found in [(man, man_options(man))] + [(p, md_options(p)) for p in mds]:
        for verb, opt, n in found:
            checked += 1
            if opt not in have[verb]:
                print(f'{path}:{n}: latprof {verb} {opt}: not in `latprof {verb} --help`')
                bad += 1
    if not checked:
        sys.exit('no options found in the docs: the parser is broken')
    print(f'{checked} documented options checked, {bad} not in --help')
    sys.exit(1 if bad else 0)


main()
