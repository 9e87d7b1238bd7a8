#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Read a latprof.pb.gz without latprof: a few lines of protobuf wire format,
so the e2e checks do not depend on latprof's own reader (profile.proto:
sample_type = 1, sample = 2 with value = 2, string_table = 6, comment = 13).

usage: pprof_decode.py meta FILE   the "latprof:KEY=VALUE" comments, KEY=VALUE a line
       pprof_decode.py sums FILE   the total of each value column, "type/unit SUM" a line
       pprof_decode.py lines FILE  per source frame (function, file, line) of the
                                   samples' stacks, the samples' first value summed:
                                   "VALUE<TAB>FUNCTION<TAB>FILE<TAB>LINE" a line
                                   (location = 4 with line = 4: function_id 1,
                                   line 2; function = 5: id 1, name 2, filename 4)
       pprof_decode.py labels FILE KEY  per value of the string label KEY (label = 3:
                                   key 1, str 2), the total of each value column:
                                   "VALUE type/unit SUM" a line ("-": no such label)
"""
import gzip
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field, wire type, value): an int for varints, bytes for lengths."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
            yield f, wt, v
        elif wt == 2:
            n, i = varint(b, i)
            yield f, wt, b[i:i + n]
            i += n
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            sys.exit("pprof_decode: bad wire type %d" % wt)


def ints(wt, v):
    """A repeated int64 field, packed or not."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def main():
    mode, path = sys.argv[1], sys.argv[2]
    data = gzip.open(path).read()
    types, strings, sums, comments = [], [], [], []
    samples, locs, funcs, by_label = [], {}, {}, []
    for f, wt, v in fields(data):
        if f == 1:
            t = dict((ff, vv) for ff, w, vv in fields(v) if w == 0)
            types.append((t.get(1, 0), t.get(2, 0)))
        elif f == 2:
            vals, ids, labels = [], [], {}
            for ff, w, vv in fields(v):
                if ff == 1:
                    ids += ints(w, vv)
                if ff == 2:
                    vals += ints(w, vv)
                if ff == 3:
                    lb = dict((a, b) for a, ww, b in fields(vv) if ww == 0)
                    labels[lb.get(1, 0)] = lb.get(2, 0)
            samples.append((ids, vals[0] if vals else 0))
            by_label.append((labels, vals))
            for k, x in enumerate(vals):
                if x >= 1 << 63:
                    x -= 1 << 64
                while len(sums) <= k:
                    sums.append(0)
                sums[k] += x
        elif f == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif f == 13:
            comments += ints(wt, v)
        elif f == 4:
            lid, lines = 0, []
            for ff, w, vv in fields(v):
                if ff == 1:
                    lid = vv
                elif ff == 4:
                    ln = dict((a, b) for a, ww, b in fields(vv) if ww == 0)
                    lines.append((ln.get(1, 0), ln.get(2, 0)))
            locs[lid] = lines
        elif f == 5:
            fn = dict((a, b) for a, ww, b in fields(v) if ww == 0)
            funcs[fn.get(1, 0)] = (fn.get(2, 0), fn.get(4, 0))
    if mode == "meta":
        for c in comments:
            if strings[c].startswith("latprof:"):
                print(strings[c][len("latprof:"):])
    elif mode == "sums":
        for k, (t, u) in enumerate(types):
            print("%s/%s %d" % (strings[t], strings[u], sums[k] if k < len(sums) else 0))
    elif mode == "lines":
        acc = {}
        for ids, val in samples:
            seen = set()
            for lid in ids:
                for fid, line in locs.get(lid, []):
                    name, fname = funcs.get(fid, (0, 0))
                    key = (strings[name], strings[fname], line)
                    if key not in seen:
                        seen.add(key)
                        acc[key] = acc.get(key, 0) + val
        for (name, fname, line), val in sorted(acc.items()):
            print("%d\t%s\t%s\t%d" % (val, name, fname, line))
    elif mode == "labels":
        acc = {}
        for labels, vals in by_label:
            key = "-"
            for k, sv in labels.items():
                if strings[k] == sys.argv[3] and sv:
                    key = strings[sv]
            row = acc.setdefault(key, [0] * len(types))
            for k, x in enumerate(vals[:len(types)]):
                row[k] += x - (1 << 64) if x >= 1 << 63 else x
        for key in sorted(acc):
            for k, (t, u) in enumerate(types):
                print("%s %s/%s %d" % (key, strings[t], strings[u], acc[key][k]))
    else:
        sys.exit(__doc__)


main()
