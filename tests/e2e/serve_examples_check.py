#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""What the example scrape configurations of examples/serve ask latprof serve for.

usage: serve_examples_check.py EXAMPLES_DIR SERVE_MD

Neither Parca nor Grafana Alloy is packaged in Debian 12, so their configs are
checked here, not by the programs: prometheus.yml and parca.yaml are parsed
with PyYAML, alloy.river with the small parser below (River/Alloy syntax:
blocks, attributes, strings, numbers, booleans, arrays, objects, dotted
references; no operators or function calls, which the file does not use).
The Parca and Alloy snippets of docs/serve.md (SERVE_MD) must parse too and
ask for the same paths as the files.

Prints one line per endpoint a config scrapes:

	CONFIG HOST:PORT PATH delta|plain AUTH

(AUTH: the bearer token file, or "-"); the caller GETs each path from a
running `latprof serve`. Exits 1 with a reason on a syntax error or a field
that is missing or wrong; 2 on bad usage.
"""
import re
import sys

import yaml

# What the pull engines fetch when a profile's path is not given.
PARCA_DEFAULT_PATHS = {'process_cpu': '/debug/pprof/profile'}
ALLOY_DEFAULT_PATHS = {'process_cpu': '/debug/pprof/profile'}


class Bad(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Bad(msg)


# --- Prometheus ---------------------------------------------------------

def prometheus(doc, name):
    out = []
    need(isinstance(doc, dict) and doc.get('scrape_configs'), f'{name}: no scrape_configs')
    for job in doc['scrape_configs']:
        need(job.get('job_name'), f'{name}: a scrape config without job_name')
        path = job.get('metrics_path', '/metrics')
        need(job.get('scheme', 'http') == 'http', f'{name}: scheme is not http')
        auth = bearer(job, name)
        for target in targets(job, name):
            out.append((name, target, path, 'plain', auth))
    return out


def bearer(job, name):
    a = job.get('authorization')
    if a is None:
        return '-'
    need(a.get('type', 'Bearer') == 'Bearer', f'{name}: authorization type is not Bearer')
    need(a.get('credentials_file'), f'{name}: authorization without credentials_file')
    return a['credentials_file']


def targets(job, name):
    out = []
    for sc in job.get('static_configs') or []:
        out += sc.get('targets') or []
    need(out, f'{name}: job {job.get("job_name")} has no static target')
    for t in out:
        need(re.fullmatch(r'[\w.-]+:\d+', str(t)), f'{name}: target {t!r} is not HOST:PORT')
    return out


# --- Parca --------------------------------------------------------------

def parca(doc, name, need_storage=True):
    out = []
    need(isinstance(doc, dict) and doc.get('scrape_configs'), f'{name}: no scrape_configs')
    if need_storage:
        need((doc.get('object_storage') or {}).get('bucket', {}).get('type'),
             f'{name}: no object_storage.bucket.type')
    for job in doc['scrape_configs']:
        need(job.get('job_name'), f'{name}: a scrape config without job_name')
        pc = ((job.get('profiling_config') or {}).get('pprof_config')) or {}
        need(pc, f'{name}: job {job["job_name"]} has no profiling_config.pprof_config')
        auth = bearer(job, name)
        for prof, cfg in pc.items():
            if not (cfg or {}).get('enabled'):
                continue
            path = cfg.get('path', PARCA_DEFAULT_PATHS.get(prof))
            need(path, f'{name}: profile {prof} enabled without a path')
            for target in targets(job, name):
                out.append((name, target, path, 'delta' if cfg.get('delta') else 'plain', auth))
    return out


# --- Alloy (River) ------------------------------------------------------

TOKEN = re.compile(r'''
    (?P<ws>[ \t\r]+) | (?P<nl>\n) | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>\d+(?:\.\d+)?)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<punct>[{}\[\]=,.])
''', re.X | re.S)


def river_tokens(text, name):
    toks, i, line = [], 0, 1
    while i < len(text):
        m = TOKEN.match(text, i)
        need(m, f'{name}:{line}: unexpected {text[i]!r}')
        kind, val = m.lastgroup, m.group()
        if kind == 'nl' or (kind == 'comment' and '\n' in val):
            toks.append(('nl', '\n', line))
        elif kind not in ('ws', 'comment'):
            toks.append((kind, val, line))
        line += val.count('\n')
        i = m.end()
    toks.append(('eof', '', line))
    return toks


class River:
    """body := (attribute | block)*, one a line; a block is NAME[.NAME...]
    ["LABEL"] { body }; a value is a literal, an array, an object or a
    dotted reference. Returns blocks as ('block', name, label, body) and
    attributes as ('attr', name, value)."""

    def __init__(self, text, name):
        self.t, self.i, self.name = river_tokens(text, name), 0, name

    def peek(self, skip_nl=False):
        j = self.i
        while skip_nl and self.t[j][0] == 'nl':
            j += 1
        return self.t[j]

    def take(self, kind=None, val=None, skip_nl=False):
        while skip_nl and self.t[self.i][0] == 'nl':
            self.i += 1
        k, v, line = self.t[self.i]
        need((kind is None or k == kind) and (val is None or v == val),
             f'{self.name}:{line}: expected {val or kind}, got {v!r}')
        self.i += 1
        return self.t[self.i - 1]

    def body(self, end):
        items = []
        while True:
            k, v, line = self.peek(skip_nl=True)
            if (k, v) == end:
                return items
            need(k == 'ident', f'{self.name}:{line}: expected an attribute or a block, got '
                 + (repr(v) if v else 'the end of the file'))
            self.take(skip_nl=True)
            if self.peek()[1] == '=':
                self.take('punct', '=')
                items.append(('attr', v, self.value()))
            else:
                name = v
                while self.peek()[1] == '.':
                    self.take('punct', '.')
                    name += '.' + self.take('ident')[1]
                label = self.take('string')[1][1:-1] if self.peek()[0] == 'string' else None
                self.take('punct', '{')
                items.append(('block', name, label, self.body(('punct', '}'))))
                self.take('punct', '}', skip_nl=True)
            k, v, line = self.peek()
            need(k in ('nl', 'eof') or v == '}',
                 f'{self.name}:{line}: {v!r} after a statement (one statement a line)')

    def value(self):
        k, v, line = self.take(skip_nl=True)
        if k == 'string':
            return v[1:-1]
        if k == 'number':
            return float(v)
        if k == 'ident' and v in ('true', 'false', 'null'):
            return {'true': True, 'false': False, 'null': None}[v]
        if k == 'ident':
            while self.peek()[1] == '.':
                self.take('punct', '.')
                v += '.' + self.take('ident')[1]
            return ('ref', v)
        if v == '[':
            return self.elements(']', self.value)
        if v == '{':
            return dict(self.elements('}', self.field))
        raise Bad(f'{self.name}:{line}: unexpected {v!r} in a value')

    def field(self):
        k, key, line = self.take(skip_nl=True)
        need(k in ('ident', 'string'), f'{self.name}:{line}: bad object key {key!r}')
        self.take('punct', '=')
        return (key.strip('"'), self.value())

    def elements(self, close, one):
        out = []
        while self.peek(skip_nl=True)[1] != close:
            out.append(one())
            if self.peek(skip_nl=True)[1] != ',':
                break
            self.take('punct', ',', skip_nl=True)
        self.take('punct', close, skip_nl=True)
        return out

    def parse(self):
        items = self.body(('eof', ''))
        self.take('eof', skip_nl=True)
        return items


def attrs(body):
    return {i[1]: i[2] for i in body if i[0] == 'attr'}


def blocks(body, name):
    return [i for i in body if i[0] == 'block' and i[1] == name]


def alloy(items, name, need_write=True):
    out = []
    scrapes = blocks(items, 'pyroscope.scrape')
    need(scrapes, f'{name}: no pyroscope.scrape block')
    if need_write:
        need(blocks(items, 'pyroscope.write'), f'{name}: no pyroscope.write block')
    for _, _, label, body in scrapes:
        a = attrs(body)
        need(isinstance(a.get('targets'), list) and a['targets'], f'{name}: {label}: no targets')
        need(a.get('forward_to'), f'{name}: {label}: no forward_to')
        auth = a.get('bearer_token_file', '-')
        pc = blocks(body, 'profiling_config')
        need(len(pc) == 1, f'{name}: {label}: want one profiling_config block')
        for _, bname, blabel, pbody in pc[0][3]:
            pa = attrs(pbody)
            if not pa.get('enabled'):
                continue
            prof = blabel if bname == 'profile.custom' else bname.split('.', 1)[1]
            path = pa.get('path', ALLOY_DEFAULT_PATHS.get(prof))
            need(path, f'{name}: profile {prof} enabled without a path')
            for t in a['targets']:
                addr = t.get('__address__') if isinstance(t, dict) else None
                need(addr and re.fullmatch(r'[\w.-]+:\d+', addr),
                     f'{name}: {label}: target without a HOST:PORT __address__')
                out.append((name, addr, path, 'delta' if pa.get('delta') else 'plain', auth))
    return out


# --- docs/serve.md ------------------------------------------------------

def md_snippet(md, heading):
    """The first indented code block under the ## heading that starts with @heading."""
    text = open(md).read()
    m = re.search(r'^## ' + re.escape(heading) + r'.*?\n(.*?)(?=^## |\Z)', text, re.M | re.S)
    need(m, f'{md}: no "## {heading}" section')
    code = []
    for line in m.group(1).split('\n'):
        if line.startswith('    '):
            code.append(line[4:])
        elif code and not line.strip():
            code.append('')
        elif code:
            break
    need(code, f'{md}: no code block under "## {heading}"')
    return '\n'.join(code)


def paths(rows):
    return sorted({(r[2], r[3]) for r in rows})


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    ex, md = sys.argv[1], sys.argv[2]
    rows = []
    try:
        rows += prometheus(yaml.safe_load(open(f'{ex}/prometheus.yml')), 'prometheus.yml')
        pa = parca(yaml.safe_load(open(f'{ex}/parca.yaml')), 'parca.yaml')
        al = alloy(River(open(f'{ex}/alloy.river').read(), 'alloy.river').parse(), 'alloy.river')
        rows += pa + al
        doc_pa = parca(yaml.safe_load(md_snippet(md, 'Parca')), f'{md} (Parca)', False)
        need(paths(doc_pa) == paths(pa),
             f'{md}: the Parca snippet asks for {paths(doc_pa)}, parca.yaml for {paths(pa)}')
        doc_al = alloy(River(md_snippet(md, 'Grafana Alloy'), f'{md} (Alloy)').parse(),
                       f'{md} (Alloy)', False)
        need(paths(doc_al) == paths(al),
             f'{md}: the Alloy snippet asks for {paths(doc_al)}, alloy.river for {paths(al)}')
    except (Bad, yaml.YAMLError, OSError) as e:
        print(f'serve_examples_check: {e}'.replace('\n', ' '), file=sys.stderr)
        sys.exit(1)
    for r in rows:
        print(' '.join(r))


main()
