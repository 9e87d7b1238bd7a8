#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A real Prometheus scrapes `latprof serve` (issue 8): Prometheus (Debian's
# /usr/bin/prometheus) runs on loopback with a 1 s scrape interval and its
# own TSDB in WORKDIR; sys_pipe makes 20 reads of about 50 ms each (its own
# count is the ground truth). Prometheus's HTTP API must then hold a
# latprof_syscall_duration_seconds_bucket series for sys_pipe's read, and
# the calls above 16 ms (_count minus the le="0.016384" bucket) must match
# the workload's reads within 10%. /metrics passes `promtool check metrics`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_fixture sys_pipe
require_cmd prometheus prometheus "a real Prometheus scraping the agent"
require_cmd promtool prometheus "promtool check metrics on /metrics"
require_cmd curl curl "GET /metrics"

# a name of its own, so sys_pipe runs of other tests on the machine do not count
name=lpserve$$
name=${name:0:15}
cp "$FIXTURES/sys_pipe" "$WORKDIR/$name" || fail "cannot copy sys_pipe"
port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" --comm "$name"

pport=$(free_port)
cat >"$WORKDIR/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: latprof
    static_configs:
      - targets: ['127.0.0.1:$port']
CONF
start_bg "$WORKDIR/prometheus.log" /usr/bin/prometheus --config.file="$WORKDIR/prometheus.yml" \
	--storage.tsdb.path="$WORKDIR/tsdb" --web.listen-address="127.0.0.1:$pport"
papi=http://127.0.0.1:$pport
for ((i = 0; i < 150; i++)); do
	[ "$(http_code "$papi/-/ready")" = 200 ] && break
	sleep 0.1
done
[ "$(http_code "$papi/-/ready")" = 200 ] || { diag_file prometheus "$WORKDIR/prometheus.log"; fail "prometheus did not become ready"; }

"$WORKDIR/$name" >"$WORKDIR/sys_pipe.out" 2>&1 || fail "sys_pipe failed"
reads=$(kv "$WORKDIR/sys_pipe.out" sys_pipe reads)
[ -n "$reads" ] || fail "sys_pipe printed no reads= line"

# prom_query EXPR: the first value of an instant query, "" when empty
prom_query()
{
	curl -s --max-time 5 -G "$papi/api/v1/query" --data-urlencode "query=$1" |
		/usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}

sel="comm=\"$name\",syscall=\"read\""
slow=""
for ((i = 0; i < 40; i++)); do
	sleep 0.5
	slow=$(prom_query "sum(latprof_syscall_duration_seconds_count{$sel}) - sum(latprof_syscall_duration_seconds_bucket{$sel,le=\"0.016384\"})")
	[ -n "$slow" ] && [ "${slow%.*}" -ge "$reads" ] 2>/dev/null && break
done
buckets=$(prom_query "count(latprof_syscall_duration_seconds_bucket{$sel})")
if [ -z "$slow" ] || [ -z "$buckets" ]; then
	diag_file "latprof serve log" "$WORKDIR/serve.log"
	curl -s "http://127.0.0.1:$port/metrics" >"$WORKDIR/metrics.txt"
	grep -F "$sel" "$WORKDIR/metrics.txt" | head -5
	fail "Prometheus has no latprof_syscall_duration_seconds series for $sel"
fi
in_range "$slow" "$(calc "$reads * 0.9")" "$(calc "$reads * 1.1")" || {
	prom_query "latprof_syscall_duration_seconds_count{$sel}"
	diag_file "latprof serve log" "$WORKDIR/serve.log"
	fail "Prometheus counts $slow reads above 16 ms for sys_pipe, the workload made $reads"
}
[ "$buckets" = 32 ] || fail "sys_pipe's read histogram has $buckets buckets in Prometheus, expected 32 (31 log2 bounds and +Inf)"
p50=$(prom_query "histogram_quantile(0.5, sum by (le) (latprof_syscall_duration_seconds_bucket{$sel}))")
in_range "$p50" 0.032 0.066 || fail "median read from Prometheus is ${p50}s, expected in the 32..65 ms bucket"

curl -s --max-time 5 "http://127.0.0.1:$port/metrics" >"$WORKDIR/metrics.txt" || fail "GET /metrics failed"
promtool check metrics <"$WORKDIR/metrics.txt" >"$WORKDIR/promtool.out" 2>&1 ||
	{ diag_file promtool "$WORKDIR/promtool.out"; fail "promtool check metrics rejects /metrics"; }
for m in latprof_cpu_samples_total latprof_lost_events_total latprof_agent_cpu_seconds_total \
	latprof_agent_resident_memory_bytes latprof_agent_bpf_map_memory_bytes; do
	grep -q "^# TYPE $m " "$WORKDIR/metrics.txt" || fail "/metrics has no $m"
done
up=$(prom_query 'up{job="latprof"}')
[ "$up" = 1 ] || fail "Prometheus sees the latprof target as up=$up"
pass "Prometheus: $slow of $reads reads above 16 ms, median ${p50}s, 32 buckets; promtool ok"
