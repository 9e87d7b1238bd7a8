#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Corrupt, truncated and hostile input to every reader the CLI has: clear
# errors, never a crash. (test_bad_input.sh covers bad options, unwritable
# outputs, and random/truncated/empty profiles for report and export.)
#
# Readers and inputs, all made here from scratch or from a fixture:
#   - pprof (report, export, flamegraph, timeline, diff): gzip header only,
#     valid gzip of a random protobuf, a length-delimited field declaring
#     2^62 and 2^32 bytes, an 11-byte varint, a string index and a location
#     id out of range, 64 MiB of gzipped zeros;
#   - folded text (flamegraph --folded, diff): random bytes, a NUL, no
#     weight, a weight of 1.5, -5, 10^26, two weights adding past 2^64, an
#     empty frame, 20,000 frames; and names full of XML (<, &, ", ]]>), which
#     must come out as a well-formed SVG (xmllint);
#   - ELF (symbolize -e): a fixture cut at 0, 3, 16, 64, 500 bytes, at half,
#     100 bytes and 1 byte short of its end; section headers moved past the
#     end; a directory, /dev/null, /proc/self/maps; and a copy with 2% of its
#     bytes flipped (may resolve or not: exit 0 or 2); addresses on stdin
#     with a NUL, a minus sign, a leading space, junk, 300 KB in one line;
#   - perf maps (record of jit_spin): /tmp/perf-PID.map replaced while
#     latprof records by random bytes, by 1 MiB names, bad and 2^64-wrapping
#     hex, NULs, and by the fixture's own line buried in that garbage (which
#     must still name jit_hot_loop in >= 90% of the samples);
#   - HTTP (latprof serve): %-encoding errors, %00 and control bytes,
#     non-ASCII, repeated keys, 100 KB parameters, out-of-range numbers, a raw
#     request line with a NUL; then the agent must still answer /healthz and a
#     valid profile request.
# Expected: exit 2 with one line (under 400 bytes) on stderr starting
# "latprof: " (HTTP: 400 or 414 with a reason), never a status >= 128
# (signal), never a hang (each call has a 30 s timeout), and no output file
# left behind.
TEST_BUDGET_S=${TEST_BUDGET_S:-100}	# ~35 s alone; room for a loaded CI machine
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
require_root_bpf
require_fixture hot_ab spin jit_spin

FAILED=""
NCASES=0
in=$WORKDIR/in
mkdir -p "$in" "$WORKDIR/out"

# expect_bad NAME WANT ARGS...: latprof ARGS exits WANT ("2", or "0|2") with
# at most one stderr line starting "latprof: " on failure, leaves nothing in
# WORKDIR/out.
expect_bad()
{
	local name=$1 want=$2 rc
	shift 2
	NCASES=$((NCASES + 1))
	timeout -k 5 30 "$LATPROF" "$@" <"${STDIN_FILE:-/dev/null}" >"$WORKDIR/$name.stdout" 2>"$WORKDIR/$name.err"
	rc=$?
	echo "$name: latprof $1 -> $rc: $(head -c 160 "$WORKDIR/$name.err" | tr '\n' ' ')" >>"$WORKDIR/cases.log"
	if ! [[ $rc =~ ^($want)$ ]]; then
		FAILED="$FAILED $name(exit $rc)"
		info "$name: latprof $* exited $rc: $(head -c 300 "$WORKDIR/$name.err" | tr '\n' ' ')"
	elif [ $rc != 0 ] && { [ "$(grep -c '' "$WORKDIR/$name.err")" != 1 ] ||
		[ "$(wc -c <"$WORKDIR/$name.err")" -gt 400 ] ||
		! grep -q '^latprof: ' "$WORKDIR/$name.err"; }; then
		FAILED="$FAILED $name(stderr)"
		diag_file "$name stderr" "$WORKDIR/$name.err" 3
	fi
	if [ -n "$(ls -A "$WORKDIR/out")" ]; then
		FAILED="$FAILED $name(left $(ls -A "$WORKDIR/out" | tr '\n' ' '))"
		rm -f "$WORKDIR/out"/*
	fi
}

# --- pprof ---
record_or_fail real -F 499 -- "$FIXTURES/hot_ab" 0.3
real=$WORKDIR/real.pb.gz
/usr/bin/python3 - "$in" <<'PY'
import gzip, random, sys
d = sys.argv[1]
random.seed(9)
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7f, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
def w(name, data, gz=True):
    open("%s/%s" % (d, name), "wb").write(gzip.compress(data) if gz else data)
vt = b"\x0a" + varint(4) + b"\x08\x01\x10\x02"          # sample_type {type: 1, unit: 2}
strs = b"\x32\x00\x32\x03cpu\x32\x02ns"
w("gzhead.pb.gz", b"\x1f\x8b\x08", gz=False)
w("random-proto.pb.gz", bytes(random.randrange(256) for _ in range(3000)))
w("len62.pb.gz", b"\x0a" + varint(1 << 62) + b"\x08\x01")
w("len32.pb.gz", b"\x12" + varint(0xffffffff) + b"\x08\x01" * 10)
w("varint11.pb.gz", b"\x08" + b"\xff" * 11 + b"\x01")
w("badstr.pb.gz", b"\x0a" + varint(4) + b"\x08\x63\x10\x64" + b"\x32\x00")
w("badloc.pb.gz", vt + b"\x12" + varint(4) + b"\x08\x07\x10\x01" + strs)
w("zeros.pb.gz", b"\x00" * (64 << 20))
PY
for f in gzhead random-proto len62 len32 varint11 badstr badloc zeros; do
	p=$in/$f.pb.gz
	expect_bad "report_$f" 2 report "$p"
	expect_bad "export_$f" 2 export "$p" --format folded -o "$WORKDIR/out/x.folded"
	expect_bad "flame_$f" 2 flamegraph "$p" -o "$WORKDIR/out/x.svg"
	expect_bad "timeline_$f" 2 timeline "$p" -o "$WORKDIR/out/t.svg"
	expect_bad "diff_$f" 2 diff "$real" "$p" -o "$WORKDIR/out/d.svg"
done

# --- folded text ---
/usr/bin/python3 - "$in" <<'PY'
import random, sys
d = sys.argv[1]
random.seed(10)
def w(name, data):
    open("%s/%s.folded" % (d, name), "wb").write(data)
w("random", bytes(random.randrange(256) for _ in range(5000)))
w("nul", b"a;b\x00c 5\nx;y 3\n")
w("noweight", b"a;b;c\n")
w("float", b"a;b 1.5\n")
w("negative", b"a;b -5\n")
w("huge", b"a;b 99999999999999999999999999\n")
w("overflow", b"a;b 18446744073709551615\na;c 18446744073709551615\n")
w("emptyframe", b"a;;b 5\n")
w("deep", (";".join("f%d" % i for i in range(20000)) + " 1\n").encode())
w("xml", b'a;b 1\n<script>x</script>;"q&r 5\n]]>;b 2\n')
PY
for f in random nul noweight float negative huge overflow emptyframe deep; do
	expect_bad "folded_$f" 2 flamegraph --folded "$in/$f.folded" -o "$WORKDIR/out/x.svg"
	expect_bad "diff_folded_$f" 2 diff "$in/$f.folded" "$in/xml.folded" -o "$WORKDIR/out/d.svg"
done
NCASES=$((NCASES + 1))
if timeout -k 5 30 "$LATPROF" flamegraph --folded "$in/xml.folded" -o "$WORKDIR/xml.svg" 2>"$WORKDIR/xml.err"; then
	xmllint --noout "$WORKDIR/xml.svg" 2>"$WORKDIR/xml.lint" || FAILED="$FAILED folded_xml(not well-formed)"
else
	FAILED="$FAILED folded_xml(exit $?)"
fi

# --- ELF ---
elf=$FIXTURES/spin
addr=0x$(nm "$elf" | awk '$3 == "spin_work" { print $1 }')
size=$(stat -c %s "$elf")
for n in 0 3 16 64 500 $((size / 2)) $((size - 100)) $((size - 1)); do
	head -c "$n" "$elf" >"$in/cut$n.elf"
	expect_bad "elf_cut$n" 2 symbolize -e "$in/cut$n.elf" "$addr"
done
/usr/bin/python3 - "$elf" "$in" <<'PY'
import random, sys
src, d = sys.argv[1], sys.argv[2]
b = bytearray(open(src, "rb").read())
h = bytearray(b)
h[0x28:0x30] = (len(b) + 4096).to_bytes(8, "little")     # e_shoff past the end
open(d + "/shoff.elf", "wb").write(h)
random.seed(11)
for i in range(64, len(b)):
    if random.random() < 0.02:
        b[i] = random.randrange(256)
open(d + "/flipped.elf", "wb").write(b)
PY
expect_bad elf_shoff 2 symbolize -e "$in/shoff.elf" "$addr"
expect_bad elf_dir 2 symbolize -e "$in" "$addr"
expect_bad elf_devnull 2 symbolize -e /dev/null "$addr"
expect_bad elf_procfile 2 symbolize -e /proc/self/maps "$addr"
expect_bad elf_flipped "0|2" symbolize -e "$in/flipped.elf" "$addr"
expect_bad elf_whole 0 symbolize -e "$elf" "$addr"
grep -qx spin_work "$WORKDIR/elf_whole.stdout" || FAILED="$FAILED elf_whole(no spin_work)"
# addresses on standard input: a NUL, a sign, a space, junk, a 300 KB line
printf '%s\n' "$addr" "$addr" >"$in/ok.txt"
printf '%s\0zz\n' "$addr" >"$in/nul.txt"
printf -- '-1\n' >"$in/minus.txt"
printf ' %s\n' "$addr" >"$in/space.txt"
printf 'zz\n' >"$in/junk.txt"
head -c 300000 /dev/zero | tr '\0' a >"$in/long.txt"
for f in nul minus space junk long; do
	STDIN_FILE=$in/$f.txt expect_bad "addr_stdin_$f" 2 symbolize -e "$elf"
done
STDIN_FILE=$in/ok.txt expect_bad addr_stdin_ok 0 symbolize -e "$elf"
[ "$(grep -cx spin_work "$WORKDIR/addr_stdin_ok.stdout")" = 2 ] || FAILED="$FAILED addr_stdin_ok(output)"

# --- perf maps, replaced while latprof records ---
# perfmap_case NAME: record jit_spin 1.5 perf-map; once its map exists, the
# python snippet in $GARBAGE rewrites it (argv: path, the fixture's line).
perfmap_case()
{
	local name=$1 lp jpid map line i rc
	NCASES=$((NCASES + 1))
	lp_record "$WORKDIR/pm_$name.out" "$WORKDIR/pm_$name.err" -F 499 -o "$WORKDIR/pm_$name.pb.gz" \
		-- "$FIXTURES/jit_spin" 1.5 perf-map &
	lp=$!
	for ((i = 0; i < 100; i++)); do
		jpid=$(pgrep -x -f "$FIXTURES/jit_spin 1.5 perf-map")
		[ -n "$jpid" ] && [ -s "/tmp/perf-$jpid.map" ] && break
		sleep 0.05
	done
	[ -n "$jpid" ] || fail "perf map $name: jit_spin did not start"
	map=/tmp/perf-$jpid.map
	at_exit rm -f "$map"
	line=$(head -n 1 "$map")
	/usr/bin/python3 -c "$GARBAGE" "$map" "$line"
	wait $lp
	rc=$?
	if [ $rc != 0 ]; then
		FAILED="$FAILED perfmap_$name(exit $rc)"
		diag_file "record stderr" "$WORKDIR/pm_$name.err" 5
		return
	fi
	lp_folded "$WORKDIR/pm_$name.pb.gz" "$WORKDIR/pm_$name.folded" || { FAILED="$FAILED perfmap_$name(export)"; return; }
	PM_TOTAL=$(folded_sum "$WORKDIR/pm_$name.folded" jit_spin)
	PM_NAMED=$(awk "$FOLDED_AWK"'{ v = folded_parse(); if (folded_is("jit_spin") && f[n] == "jit_hot_loop_[j]") s += v } END { print s + 0 }' "$WORKDIR/pm_$name.folded")
	info "perf map $name: $PM_NAMED of $PM_TOTAL samples named jit_hot_loop"
	[ "$PM_TOTAL" -gt 0 ] || FAILED="$FAILED perfmap_$name(no samples)"
}
GARBAGE='
import random, sys
random.seed(12)
open(sys.argv[1], "wb").write(bytes(random.randrange(256) for _ in range(1 << 16)))'
perfmap_case random
GARBAGE='
import sys
g = [b"zz 10 bad_hex", b"ffffffffffffffff ffffffffffffffff wraps", b"1000 0 zero_size",
     b"1000 10", b"1000 10 " + b"n" * (1 << 20), b"\x00\x00 1 nul", b"  ", b"-1 -1 neg"]
open(sys.argv[1], "wb").write(b"\n".join(g * 50) + b"\n")'
perfmap_case lines
GARBAGE='
import sys
g = [b"zz 10 bad_hex", b"ffffffffffffffff ffffffffffffffff wraps", b"\x00\x00 1 nul", b"1000 10 " + b"n" * 4096]
open(sys.argv[1], "wb").write(b"\n".join(g * 20 + [sys.argv[2].encode()] + g * 20) + b"\n")'
perfmap_case buried
in_range "$(ratio "$PM_NAMED" "$PM_TOTAL")" 0.9 1 || FAILED="$FAILED perfmap_buried(named_${PM_NAMED}_of_$PM_TOTAL)"

# --- HTTP query strings ---
port=$(free_port)
start_bg "$WORKDIR/spin.out" "$FIXTURES/spin" 0
start_serve "$WORKDIR/serve.log" "$port" -p "$BG_PID" --mode cpu
base=http://127.0.0.1:$port
long=$(head -c 100000 /dev/zero | tr '\0' a)
for q in "seconds=%" "seconds=%zz" "seconds=%00" "seconds=1%001" "seconds=1%01" "comm=spin%0a" \
	"weight=%ff%fe" "seconds=1&seconds=2" "seconds=1&seconds=abc" "hz=1&hz=2&seconds=1" \
	"weight=cpu&weight=latency&seconds=1" "hz=99999999999999999999999" "seconds=-1" \
	"seconds=0x1" "seconds=1e3" "seconds=" "pid=0" "pid=4194305" "comm=%00&seconds=1" \
	"comm=$long" "$long=1" "seconds=$long"; do
	for ep in /debug/pprof/profile /flamegraph; do
		NCASES=$((NCASES + 1))
		c=$(curl -s -o "$WORKDIR/http.body" -w '%{http_code}' --max-time 10 "$base$ep?$q")
		echo "http $ep?${q:0:60} -> $c $(head -c 100 "$WORKDIR/http.body" | tr -d '\0' | tr '\n' ' ')" >>"$WORKDIR/cases.log"
		case $c in
		400 | 414) ;;
		*) FAILED="$FAILED http($ep?${q:0:30}:$c)" ;;
		esac
	done
done
/usr/bin/python3 - "$port" <<'PY' >>"$WORKDIR/cases.log" 2>&1
import socket, sys
for req in (b"GET /metrics?a=b\x00c HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /debug/pprof/profile?seconds=1\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
            b"\x00\x01\x02\r\n\r\n", b"GET /" + b"%" * 5000 + b" HTTP/1.1\r\n\r\n"):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    s.sendall(req)
    try:
        print("raw request -> %r" % s.recv(64)[:32])
    except OSError as e:
        print("raw request -> %s" % e)
    s.close()
PY
kill -0 "$SERVE_PID" 2>/dev/null || FAILED="$FAILED http(serve died)"
NCASES=$((NCASES + 2))
[ "$(http_code "$base/healthz")" = 200 ] || FAILED="$FAILED http(healthz after)"
[ "$(http_code "$base/debug/pprof/profile?seconds=1")" = 200 ] || FAILED="$FAILED http(valid profile after)"

if [ -n "$FAILED" ]; then
	tail -n 15 "$WORKDIR/cases.log" | sed 's/^/  | /'
	fail "$(grep -o "([^)]*)" <<<"$FAILED" | wc -l) of $NCASES cases failed:$FAILED"
fi
pass "$NCASES hostile inputs: clear errors, no crash"
