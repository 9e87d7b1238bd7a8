#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Request tracking on a thread-per-connection server with known handlers.
#
# Ground truth (from the fixtures, not latprof): req_server serves /spin
# (20 ms of thread CPU), /sleep (nanosleep 30 ms) and /file (reads a 64 MiB
# file: 10-20 ms, so that the 0.1-0.5 ms the server may lose to the client it
# wakes, after its write's sys_exit and before its own clock read, stays
# within the 10%) on one thread per keep-alive connection, and prints per endpoint the
# requests it completed, handler_ns (summed, from the return of the read that
# brought the request to the return of the write of the response: the span
# latprof measures) and cpu_ns. req_client sends 20 requests to one endpoint
# over 2 keep-alive connections; the three endpoints run one after the other,
# with CLOCK_MONOTONIC marks (the clock of BPF's ktime) printed between them,
# so each request latprof reports belongs to the phase its start falls in.
# Checks, `record --requests --files --net -- drive.sh` (the driver runs
# server and client):
#   - per endpoint, latprof's request count equals req_server's;
#   - per endpoint, latprof's summed and mean latency are within 10% of
#     req_server's handler_ns and mean_ns;
#   - /spin's CPU is req_server's cpu_ns +-10%, and >= 80% of its latency
#     (on a machine busy with other work the handler itself gets less than
#     80%: then >= 90% of the share req_server measured); >= 80% of /sleep's
#     latency is sleep; no request is "shared" (thread-per-request: exact);
#   - files: the /file phase's file shows up with 20 opens and exactly
#     20 x its size read; network: the client's address with 2 x 3 accepted
#     connections;
#   - report has the Requests, Files and Network sections;
#   - a second, short recording with --syscalls clock_nanosleep (5 /sleep
#     requests): requests are still all found (the syscalls they follow are
#     traced anyway), the per-syscall statistics hold clock_nanosleep only.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture req_server
require_fixture req_client

data=$WORKDIR/data.bin
head -c 67108864 /dev/urandom >"$data"
drive=$WORKDIR/drive.sh
cat >"$drive" <<EOF
#!/bin/bash
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
"$FIXTURES/req_server" --port 0 --file "$data" >"$WORKDIR/server.out" 2>&1 &
srv=\$!
for i in \$(seq 100); do
	grep -q port= "$WORKDIR/server.out" 2>/dev/null && break
	sleep 0.05
done
port=\$(sed -n 's/.* port=\([0-9]*\).*/\1/p' "$WORKDIR/server.out")
for path in /spin /sleep /file; do
	echo "mark path=\$path start_ns=\$(mono)"
	"$FIXTURES/req_client" --port "\$port" --requests 20 --concurrency 2 --paths "\$path"
done
echo "mark path=end start_ns=\$(mono)"
kill -TERM \$srv
wait \$srv
EOF
chmod +x "$drive"

record_or_fail req --requests --files --net -- "$drive"
prof=$WORKDIR/req.pb.gz
out=$WORKDIR/req.out
srv=$WORKDIR/server.out
grep -q "req_server endpoint=/file" "$srv" || { diag_file "server" "$srv"; diag_file "driver" "$out"; fail "req_server printed no statistics"; }

json=$WORKDIR/req.json
"$LATPROF" export "$prof" --format json -o "$json" 2>"$WORKDIR/export.err" ||
	{ diag_file "export stderr" "$WORKDIR/export.err"; fail "export --format json failed"; }
json_check "$json"

# per phase: count sum_ns mean_ns cpu_ns sleep_ns shared, from latprof's requests
phase_stats()
{
	local lo hi
	lo=$(awk -v p="$1" '$1 == "mark" && $2 == "path=" p { sub("start_ns=", "", $3); print $3 }' "$out")
	hi=$(awk -v p="$2" '$1 == "mark" && $2 == "path=" p { sub("start_ns=", "", $3); print $3 }' "$out")
	json_py "$json" '
lo, hi = int(sys.argv[2]), int(sys.argv[3])
rs = [r for r in j["requests"]["items"] if lo <= r["start_ns"] < hi]
n = len(rs); s = sum(r["duration_ns"] for r in rs)
print(n, s, s // n if n else 0, sum(r["cpu_ns"] for r in rs), sum(r["sleep_ns"] for r in rs),
      sum(1 for r in rs if r["shared"]))' "$lo" "$hi"
}

check_phase()
{
	local path=$1 next=$2 st n sum mean cpu sleep shared tn tsum tmean tcpu want
	st=$(phase_stats "$path" "$next")
	read -r n sum mean cpu sleep shared <<<"$st"
	tn=$(kv "$srv" "req_server endpoint=$path " requests)
	tsum=$(kv "$srv" "req_server endpoint=$path " handler_ns)
	tmean=$(kv "$srv" "req_server endpoint=$path " mean_ns)
	tcpu=$(kv "$srv" "req_server endpoint=$path " cpu_ns)
	info "$path: latprof n=$n sum_ns=$sum mean_ns=$mean cpu_ns=$cpu sleep_ns=$sleep shared=$shared; truth n=$tn handler_ns=$tsum mean_ns=$tmean cpu_ns=$tcpu"
	[ "$n" = "$tn" ] || fail "$path: latprof found $n requests, req_server served $tn"
	in_range "$(ratio "$sum" "$tsum")" 0.90 1.10 || fail "$path: summed latency $sum ns, req_server says $tsum ns (want +-10%)"
	in_range "$(ratio "$mean" "$tmean")" 0.90 1.10 || fail "$path: mean latency $mean ns, req_server says $tmean ns (want +-10%)"
	[ "$shared" = 0 ] || fail "$path: $shared requests marked shared on a thread-per-connection server"
	case $path in
	/spin)
		in_range "$(ratio "$cpu" "$tcpu")" 0.90 1.10 || fail "/spin: CPU is $cpu ns, req_server measured $tcpu ns (want +-10%)"
		want=$(awk -v c="$tcpu" -v h="$tsum" 'BEGIN { s = 0.9 * c / h; printf "%.3f", s < 0.8 ? s : 0.8 }')
		info "/spin: CPU share $(ratio "$cpu" "$sum"), want >= $want (req_server: $(ratio "$tcpu" "$tsum"))"
		in_range "$(ratio "$cpu" "$sum")" "$want" 1.01 || fail "/spin: CPU is $cpu of $sum ns (want a share >= $want)" ;;
	/sleep) in_range "$(ratio "$sleep" "$sum")" 0.80 1.01 || fail "/sleep: sleep is $sleep of $sum ns (want >= 80%)" ;;
	esac
}

check_phase /spin /sleep
check_phase /sleep /file
check_phase /file end

size=$(stat -c %s "$data")
got=$(json_py "$json" '
f = [x for x in j.get("files", []) if x["path"] == sys.argv[2]]
print(f[0]["opens"], f[0]["bytes_read"]) if f else print("0 0")' "$data")
info "files: $data opens/bytes_read = $got (truth 20 $((20 * size)))"
[ "$got" = "20 $((20 * size))" ] || fail "files: $data has opens/bytes_read '$got', expected '20 $((20 * size))'"
conns=$(json_py "$json" '
print(sum(x["connections"] for x in j.get("network", []) if x["direction"] == "accept" and x["peer"] == "127.0.0.1"))')
info "network: accepted connections from 127.0.0.1 = $conns (truth 6)"
[ "$conns" = 6 ] || fail "network: $conns accepted connections from 127.0.0.1, expected 6"

rep=$WORKDIR/report.txt
"$LATPROF" report "$prof" --no-color >"$rep" 2>&1 || { diag_file report "$rep"; fail "report failed"; }
for s in Requests Files Network; do
	grep -q "^$s " "$rep" || { diag_file report "$rep" 80; fail "report has no $s section"; }
done
sed -i -e 's/for path in \/spin \/sleep \/file; do/for path in \/sleep; do/' -e 's/--requests 20 /--requests 5 /' "$drive"
record_or_fail filt --requests --syscalls clock_nanosleep -- "$drive"
"$LATPROF" export "$WORKDIR/filt.pb.gz" --format json -o "$WORKDIR/filt.json" 2>/dev/null || fail "export of the --syscalls recording failed"
read -r n names <<<"$(json_py "$WORKDIR/filt.json" '
print(j["requests"]["count"], ",".join(sorted(set(s["name"] for s in j["syscalls"]))))')"
info "--syscalls clock_nanosleep: $n requests (truth 5), syscall statistics for: $names"
[ "$n" = 5 ] || fail "--syscalls clock_nanosleep --requests: $n requests, req_client sent 5"
[ "$names" = clock_nanosleep ] || fail "--syscalls clock_nanosleep --requests: statistics for $names"
pass "3 endpoints: counts exact, latency and breakdown match req_server"
