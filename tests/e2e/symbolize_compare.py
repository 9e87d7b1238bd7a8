#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compare `latprof symbolize -a -i` with `eu-addr2line -a -f -i` on N random
addresses of an ELF file's .text that lie inside a function symbol (the
alignment padding between functions is never executed, and there the two
tools guess differently), and print the agreement.

usage: symbolize_compare.py LATPROF FILE N SEED [eu|gnu]

The reference is elfutils' eu-addr2line, or with "gnu" binutils' addr2line:
eu-addr2line -i gives no inline frames for debuginfo that dwz moved into an
alternate file (Debian's python3.11-dbg), where GNU addr2line and gdb do.

An address agrees when both give the same chain of frames, innermost first:
the same functions and the same file:line (base name and line; eu-addr2line
adds :column and the compilation directory). Names agree when equal, when
they are two names of one symbol (aliases such as argz_create_sep and
__argz_create_sep share an address in the symbol table), parts of one
function (f.cold, f.isra.0 are f), or, for the outermost frame only, when
eu-addr2line gives the DWARF name and latprof a symbol-table name (the line
must still agree). Prints "agree=A total=N" and the first disagreements.
"""
import bisect
import random
import subprocess
import sys


def text_range(path):
    out = subprocess.run(["eu-readelf", "-S", "-W", path], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if ".text" in f:
            i = f.index(".text")
            addr, size = int(f[i + 2], 16), int(f[i + 4], 16)
            return addr, addr + size
    sys.exit("no .text in " + path)


def debug_file(path):
    """The separate debuginfo of PATH under /usr/lib/debug/.build-id, or None."""
    out = subprocess.run(["eu-readelf", "-n", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            bid = line.split("Build ID:")[1].strip()
            return "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    return None


def aliases(path):
    """symbol name -> its addresses (versions of a name differ), from .symtab and .dynsym, the separate
    debuginfo's too (glibc's __GI_ aliases live there)."""
    names = {}
    for f in (path, debug_file(path)):
        if not f:
            continue
        out = subprocess.run(["eu-readelf", "-s", "-W", f], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 8 and f[3] in ("FUNC", "IFUNC", "GNU_IFUNC") and f[0].endswith(":"):
                names.setdefault(f[7].split("@")[0], set()).add(int(f[1], 16))
    return names


def parse(out):
    """{address: [(function, file, line), ...]} from -a output."""
    res, cur, lines = {}, None, out.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            cur = int(lines[i], 16)
            res[cur] = []
            i += 1
            continue
        fn, loc = lines[i], lines[i + 1] if i + 1 < len(lines) else "??:0"
        fn = fn.split(" inlined at ")[0]
        parts = loc.split(":")
        fname = parts[0].rsplit("/", 1)[-1]
        # GNU addr2line may add " (discriminator N)"
        line = parts[1].split()[0] if len(parts) > 1 and parts[1].split() else "0"
        res[cur].append((fn, fname, line))
        i += 2
    return res


def base_function(name):
    """The function a compiler's split or clone belongs to: f.cold, f.part.0,
    f.isra.0, f.constprop.0 are all f (eu-addr2line names the DWARF function,
    the symbol table the split part)."""
    for suffix in (".cold", ".part.", ".isra.", ".constprop.", ".lto_priv."):
        if suffix in name:
            name = name[:name.index(suffix)]
    return name


def same_function(ref, got, names, outermost):
    if ref == got or base_function(ref) == base_function(got):
        return True
    if ref in names and got in names and names[ref] & names[got]:
        return True
    # eu-addr2line names the outermost function by its DWARF name (glob's is
    # __glob, an ifunc resolver's __mempcpy_ifunc); latprof by the symbol
    # table, preferring public names: accept a symbol-table name there (the
    # file:line must still agree), never for inlined frames
    return outermost and got in names


def function_spans(path, lo, hi):
    """[(start, size)] of the sized FUNC symbols of PATH's .symtab in [lo, hi)."""
    out = subprocess.run(["eu-readelf", "-s", "-W", path], capture_output=True,
                         text=True).stdout
    spans = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[0].endswith(":"):
            start, size = int(f[1], 16), int(f[2], 0)
            if size > 0 and lo <= start < hi:
                spans.add((start, min(size, hi - start)))
    return sorted(spans)


def pick(rnd, spans, lo, hi, n):
    """N addresses uniform over the bytes of SPANS (all of [lo, hi) if none)."""
    if not spans:
        return [rnd.randrange(lo, hi) for _ in range(n)]
    total = sum(size for _, size in spans)
    cum, acc = [], 0
    for start, size in spans:
        acc += size
        cum.append(acc)
    res = []
    for _ in range(n):
        x = rnd.randrange(total)
        i = bisect.bisect_right(cum, x)
        res.append(spans[i][0] + x - (cum[i] - spans[i][1]))
    return res


def main():
    latprof, path, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    tool = ["addr2line"] if sys.argv[5:] == ["gnu"] else ["eu-addr2line"]
    lo, hi = text_range(path)
    rnd = random.Random(seed)
    addrs = sorted(set(pick(rnd, function_spans(path, lo, hi), lo, hi, n)))
    inp = "".join("%x\n" % a for a in addrs)
    ref = parse(subprocess.run(tool + ["-a", "-f", "-i", "-e", path], input=inp,
                               capture_output=True, text=True).stdout)
    got = parse(subprocess.run([latprof, "symbolize", "-a", "-i", "-e", path], input=inp,
                               capture_output=True, text=True, check=True).stdout)
    names = aliases(path)
    agree, bad = 0, []
    for a in addrs:
        r, g = ref.get(a, []), got.get(a, [])
        ok = len(r) == len(g) and all(
            same_function(x[0], y[0], names, k == len(r) - 1) and x[1:] == y[1:]
            for k, (x, y) in enumerate(zip(r, g)))
        if ok:
            agree += 1
        elif len(bad) < 8:
            bad.append("  0x%x\n    %s: %s\n    latprof:      %s" % (a, tool[0], r, g))
    print("agree=%d total=%d" % (agree, len(addrs)))
    for b in bad:
        print(b)


main()
