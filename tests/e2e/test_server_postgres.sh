#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# PostgreSQL 15 + pgbench (Debian's packages), as a user would record it:
# `latprof record --comm postgres` while pgbench runs.
#
# Ground truth (from PostgreSQL, not latprof): pg_stat_wal, reset just
# before latprof attaches, with track_wal_io_timing=on, counts every WAL
# sync (wal_sync: fdatasync, the default wal_sync_method on Linux) and the
# time the server measured around them (wal_sync_time). pgbench runs 4
# clients for 4 s against a fresh scale-1 database on a disk file system,
# synchronous_commit on, so every commit waits for a WAL flush. Checks (the
# default --min-duration: calls >= 1 ms are attributed to their stacks; a
# WAL sync here averages ~0.5 ms and its tail passes 1 ms. A lower
# threshold, as the Redis and Go tests use, is no cure here: at 10 us or
# 100 us PostgreSQL makes 25,000-29,000 slow calls in 8 s, and the
# sanitized build's consumer lost 1,394-8,329 of their stacks in CI10):
#   - latprof's fdatasync count (its per-syscall statistics count every
#     call) equals wal_sync (+-2%) and its total time is wal_sync_time +-15%;
#   - no loss counted (lost_total 0);
#   - >= 80% of the slow fdatasync time is under XLogFlush, and some of it under
#     CommitTransactionCommand (the commit path; static functions of the
#     stripped binary are "postgres+0x..." between them);
#   - report: a slow call site on the path of work comes first, and the
#     idle waits (the background processes' epoll_wait, the backends' waits
#     for their client's next command) are listed apart with their total;
#   - no slow call site is made only of libc frames.
# Then the wait rule (docs/syscalls.md, "Idle waits"), `record --comm
# postgres --comm psql` while psql runs `SELECT pg_sleep(0.2)` 10 times over
# TCP with \timing on (psql's own clock around each query is the truth):
#   - psql's poll for each result (libpq waits in poll) is on the path:
#     latency:path >= 85% of the query time psql measured, none idle;
#   - the backend's pg_sleep (WaitLatch: epoll_wait) is on the path too:
#     >= 85% of that time under pg_sleep in latency:path;
#   - every other postgres process's readiness waits (the background
#     writers', the postmaster's) are >= 95% idle.
. "$(dirname "$0")/lib.sh"
require_root_bpf
PGBIN=/usr/lib/postgresql/15/bin
require_cmd pgbench postgresql "the PostgreSQL test"
[ -x "$PGBIN/postgres" ] || { [ "${CI:-}" = true ] && fail "no $PGBIN/postgres (postgresql)"; skip "no $PGBIN/postgres"; }
id postgres >/dev/null 2>&1 || fail "no postgres user (postgresql's package makes it)"

disk_workdir
pgdir=$DISK_DIR/pg
mkdir -p "$pgdir" && chown postgres "$pgdir" && chmod 0711 "$WORKDIR" "$DISK_DIR" ||
	fail "cannot prepare $pgdir for the postgres user"
pg() { runuser -u postgres -- "$@"; }
port=$((50000 + $$ % 10000))
sql() { pg "$PGBIN/psql" -h "$pgdir" -p "$port" -XAtqc "$1" postgres; }

pg "$PGBIN/initdb" -D "$pgdir/data" -A trust >"$WORKDIR/initdb.log" 2>&1 ||
	{ diag_file initdb "$WORKDIR/initdb.log"; fail "initdb failed"; }
pg "$PGBIN/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w -t 20 start -o \
	"-k $pgdir -p $port -c listen_addresses=127.0.0.1 -c track_wal_io_timing=on -c checkpoint_timeout=1h" \
	>"$WORKDIR/pg_ctl.log" 2>&1 || { diag_file "server log" "$pgdir/log"; fail "postgres did not start"; }
at_exit runuser -u postgres -- "$PGBIN/pg_ctl" -D "$pgdir/data" -m immediate -w stop
pg "$PGBIN/pgbench" -h "$pgdir" -p "$port" -i -s 1 postgres >"$WORKDIR/pgbench-i.log" 2>&1 ||
	{ diag_file "pgbench -i" "$WORKDIR/pgbench-i.log"; fail "pgbench -i failed"; }
sql "checkpoint" >/dev/null
sql "select pg_stat_reset_shared('wal')" >/dev/null

prof=$WORKDIR/pg.pb.gz
# -d bounds it; -v says when every program is attached
start_bg "$WORKDIR/lp.err" "$LATPROF" record -v --comm postgres -d 8 -o "$prof"
lp=$BG_PID
# loaded is not attached: -v says when every program is attached
wait_for_line "$WORKDIR/lp.err" "attached after" 20 || { diag_file "latprof stderr" "$WORKDIR/lp.err"; fail "latprof did not attach"; }
pg "$PGBIN/pgbench" -h "$pgdir" -p "$port" -c 4 -T 4 postgres >"$WORKDIR/pgbench.log" 2>&1 ||
	{ diag_file pgbench "$WORKDIR/pgbench.log"; fail "pgbench failed"; }
wait "$lp" || { diag_file "latprof stderr" "$WORKDIR/lp.err"; fail "latprof record exited non-zero"; }
sleep 1	# the walwriter reports its WAL statistics on its own cycle
read -r wal_sync wal_sync_ms < <(sql "select wal_sync, wal_sync_time from pg_stat_wal" | tr '|' ' ')
tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$WORKDIR/pgbench.log" | head -1)
[ "${wal_sync:-0}" -gt 100 ] || fail "pg_stat_wal counts only '$wal_sync' syncs: too few to test"

json=$WORKDIR/pg.json
export_or_fail "$prof" "$json" --format json
read -r count total < <(/usr/bin/python3 -c '
import json, sys
c = t = 0
for s in json.load(open(sys.argv[1]))["syscalls"]:
    if s["name"] == "fdatasync":
        c += s["count"]; t += s["total_ns"]
print(c, t)' "$json")
info "pgbench: $tps tps; pg_stat_wal: $wal_sync syncs, $wal_sync_ms ms; latprof: $count fdatasync, $total ns"
in_range "$(calc "$count / $wal_sync")" 0.98 1.02 || fail "latprof counted $count fdatasync, pg_stat_wal $wal_sync"
in_range "$(calc "$total / 1e6 / $wal_sync_ms")" 0.85 1.15 ||
	fail "latprof's fdatasync total $total ns, pg_stat_wal's wal_sync_time $wal_sync_ms ms (+-15%)"

lost=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["lost_total"])' "$json")
[ "$lost" = 0 ] || fail "the recording lost $lost events (lost_total)"

folded=$WORKDIR/pg.folded
export_or_fail "$prof" "$folded" --format folded --weight latency
read -r all flush commit < <(awk '/;syscall:fdatasync [0-9]+$/ {
		all += $NF
		if (/;XLogFlush;/) flush += $NF
		if (/;CommitTransactionCommand;/) commit += $NF
	} END { printf "%.0f %.0f %.0f\n", all, flush, commit }' "$folded")
info "fdatasync latency $all ns: under XLogFlush $flush, under CommitTransactionCommand $commit"
in_range "$(calc "$flush / $all")" 0.80 1.0 || fail "only $flush of $all ns of fdatasync under XLogFlush"
[ "$commit" -gt 0 ] || fail "no fdatasync under CommitTransactionCommand"

report=$WORKDIR/pg.report
lp_report "$prof" "$report" || { diag_file "report stderr" "$report.err"; fail "latprof report exited non-zero"; }
sites=$(awk '/^Slow call sites/ { s = 1; next } s && /^[^ ]/ { s = 0 } s' "$report")
# the sites on the path come first, before the undecided and idle groups
first=$(echo "$sites" | awk '/waits, (not decided|apart)/ { exit } $NF ~ /^syscall:/ { print $NF; exit }')
[ -n "$first" ] || { echo "$sites" | head -20 | sed 's/^/  | /'; fail "no slow call site on the path of work"; }
# the commit's WAL flush is on the path, with its caller named: a site
# syscall:fdatasync above the undecided and idle groups whose frames hold
# XLogFlush (lock waits, epoll_wait under ProcSleep, may come first)
echo "$sites" | awk '/waits, (not decided|apart)/ { exit }
	want { if ((";" $1 ";") ~ /;XLogFlush;/) ok = 1; want = 0 }
	$NF == "syscall:fdatasync" { want = 1 }
	END { exit !ok }' ||
	{ echo "$sites" | head -20 | sed 's/^/  | /'; fail "no fdatasync site under XLogFlush on the path of work"; }
idle=$(echo "$sites" | awk '/idle waits, apart/ { getline; print }' |
	sed -n 's/.*): \([0-9.]*[a-z]*s\) in \([0-9]*\) calls$/\1 in \2 calls/p')
[ -n "$idle" ] || { echo "$sites" | head -40 | sed 's/^/  | /'; fail "the idle waits are not listed apart with their total"; }
echo "$sites" | awk '/idle waits, apart/ { s = 1 } s && /syscall:epoll_wait/ { ok = 1 } END { exit !ok }' ||
	fail "epoll_wait is not among the idle waits"
# a site's frames: the line after each "syscall:" line; none only libc's
libc_only=$(echo "$sites" | awk 'want { print $1; want = 0 } $NF ~ /^syscall:/ { want = 1 }' |
	grep -E '^(__[a-z_]*|pthread_[a-z_]*|syscall)(;(__[a-z_]*|pthread_[a-z_]*|syscall))*$' || true)
[ -z "$libc_only" ] || fail "slow call sites made of libc frames only: $libc_only"
# the wait rule: a client's and a backend's waits for a query on the path
printf 'SELECT pg_sleep(0.2);\n%.0s' $(seq 10) >"$WORKDIR/sleeps.sql"
chmod 0644 "$WORKDIR/sleeps.sql"
prof=$WORKDIR/pgw.pb.gz
start_bg "$WORKDIR/lpw.err" "$LATPROF" record -v --comm postgres --comm psql -d 5 -o "$prof"
lp=$BG_PID
wait_for_line "$WORKDIR/lpw.err" "attached after" 20 || { diag_file "latprof stderr" "$WORKDIR/lpw.err"; fail "latprof did not attach"; }
pg "$PGBIN/psql" -h 127.0.0.1 -p "$port" -X -c '\timing on' -f "$WORKDIR/sleeps.sql" postgres \
	>"$WORKDIR/psql.log" 2>&1 || { diag_file psql "$WORKDIR/psql.log"; fail "psql failed"; }
wait "$lp" || { diag_file "latprof stderr" "$WORKDIR/lpw.err"; fail "latprof record exited non-zero"; }
truth=$(awk '/^Time: / { s += $2 } END { printf "%.0f", s * 1e6 }' "$WORKDIR/psql.log")
[ "$(grep -c '^Time: ' "$WORKDIR/psql.log")" = 10 ] ||
	{ diag_file psql "$WORKDIR/psql.log"; fail "psql did not time 10 queries"; }
for w in path idle readiness; do
	export_or_fail "$prof" "$WORKDIR/pgw.$w.folded" --format folded --per-pid --weight latency:$w
done
waits='syscall:(epoll_wait|epoll_pwait|epoll_pwait2|select|pselect6|poll|ppoll|accept|accept4) [0-9]+$'
# sums W PATTERN [EXCLUDE]: latency:W of the stacks matching PATTERN, not EXCLUDE
sums()
{
	awk -v pat="$2" -v ex="${3:-^$}" '$0 ~ pat && $0 !~ ex { s += $NF } END { printf "%.0f", s }' \
		"$WORKDIR/pgw.$1.folded"
}
psql_path=$(sums path '^psql-[0-9]+;.*syscall:poll [0-9]+$')
psql_idle=$(sums idle '^psql-[0-9]+;.*syscall:poll [0-9]+$')
sleep_path=$(sums path ';pg_sleep;.*syscall:epoll_wait [0-9]+$')
backend=$(awk '/;pg_sleep;/ { split($1, f, ";"); print f[1]; exit }' "$WORKDIR/pgw.path.folded")
bg_idle=$(sums idle "^postgres-[0-9]+;.*$waits" "^${backend:-none};")
bg_all=$((bg_idle + $(sums path "^postgres-[0-9]+;.*$waits" "^${backend:-none};") +
	$(sums readiness "^postgres-[0-9]+;.*$waits" "^${backend:-none};")))
info "pg_sleep x10: psql measured $truth ns; psql's poll on the path $psql_path (idle $psql_idle)," \
	"the backend ($backend) under pg_sleep on the path $sleep_path; the other postgres" \
	"processes' readiness waits $bg_idle of $bg_all ns idle"
if [ "$(calc "($psql_path >= 0.85 * $truth && $sleep_path >= 0.85 * $truth)")" != 1.000 ] ||
	[ "$psql_idle" != 0 ]; then
	grep -h -e '^psql' -e 'pg_sleep' "$WORKDIR"/pgw.*.folded | cut -c1-200 | sed 's/^/  | /' >&2
	fail "the waits for a query are not on the path"
fi
[ "$bg_all" -gt 0 ] && [ "$(calc "($bg_idle >= 0.95 * $bg_all)")" = 1.000 ] || {
	grep -hv -e '^psql' -e "^${backend:-none};" "$WORKDIR/pgw.path.folded" "$WORKDIR/pgw.readiness.folded" |
		grep -E "$waits" | cut -c1-200 | sed 's/^/  | /' >&2
	fail "the background processes' waits are not idle"
}

pass "$count fdatasync = pg_stat_wal's $wal_sync, $total ns vs $wal_sync_ms ms; first site $first; idle waits apart: $idle; pg_sleep on the path $(ratio "$psql_path" "$truth") (psql), $(ratio "$sleep_path" "$truth") (backend); background waits $(ratio "$bg_idle" "$bg_all") idle"
