#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# No kernel stack is lost to another one, with more distinct kernel stacks
# than the old stack maps held.
#
# bpf_get_stackid's map (BPF_MAP_TYPE_STACK_TRACE) is a hash table without
# chains: a stack whose bucket holds another one is refused at birthday odds,
# long before the map is full. With one 4096-entry map (--unwind dwarf) this
# workload lost 2074-2083 of ~13,000 kernel stacks at -F 4999, and 37 with
# the two collision maps that followed (docs/performance.md). Stacks now go
# to a hash table with chains keyed by a 64-bit hash of their frames
# (bpf/stacks.bpf.h, stack_get), so one is lost only when the map is full
# (lost.kstack_map_full), and two stacks of one hash would be counted in
# lost.kstack_error.
#
# Two kstack_spread processes spend 7 s in the kernel along many paths
# (path lookups, /proc, pipes, sockets, page faults, fork), one per CPU,
# sampled at 4999 Hz. 4 s gave 4070-4326 stacks, a margin over 4096 that a
# loaded machine (fewer samples, user stacks lost to a busy reader) did not
# keep: 7 s gives the precondition below room to spare. Checks, with DWARF and with frame-pointer stacks:
#   - count.stacks > 4096 (the old map's entries): the workload is big enough;
#   - at least 300 distinct kernel stacks by function names (a lower bound on
#     the distinct stacks by address, read off the output);
#   - lost.kstack_map_full, lost.kstack_error and lost.kstack_missing are 0
#     (and their ustack_ twins with frame pointers);
#   - >= 85% of the samples carry kernel frames (the workload is in the
#     kernel nearly all the time).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture kstack_spread

meta()
{
	profile_meta "$1" | awk -v k="$2" 'index($0, k "=") == 1 { print substr($0, length(k) + 2) }'
}

summary=
for unwind in dwarf fp; do
	record_and_fold "ks_$unwind" -F 4999 --unwind "$unwind" -- sh -c \
		"'$FIXTURES/kstack_spread' 7 & '$FIXTURES/kstack_spread' 7; wait"
	prof="$WORKDIR/ks_$unwind.pb.gz"
	read -r distinct kernel total < <(awk -v comm=kstack_spread "$FOLDED_AWK"'
		{
			cnt = folded_parse()
			if (!folded_is(comm))
				next
			total += cnt
			s = ""
			for (j = 2; j <= n; j++)
				if (f[j] ~ /_\[k\]$/)
					s = s ";" f[j]
			if (s != "") {
				kernel += cnt
				seen[s] = 1
			}
		}
		END { print length(seen) + 0, kernel + 0, total + 0 }' "$WORKDIR/ks_$unwind.folded")
	stacks=$(meta "$prof" count.stacks)
	info "$unwind: $stacks stacks in the map, $distinct distinct kernel stacks by name;" \
		"$kernel of $total samples with kernel frames;" \
		"$(profile_meta "$prof" | grep -E '^lost\.' | grep -v '=0$' | tr '\n' ' ')"
	[ "${stacks:-0}" -gt 4096 ] ||
		fail "$unwind: count.stacks '$stacks': not more than the old map's 4096 entries (workload too small)"
	[ "$distinct" -ge 300 ] ||
		fail "$unwind: only $distinct distinct kernel stacks by name (want >= 300)"
	keys="lost.kstack_map_full lost.kstack_error lost.kstack_missing"
	[ "$unwind" = fp ] && keys="$keys lost.ustack_map_full lost.ustack_error lost.ustack_missing"
	for k in $keys; do
		v=$(meta "$prof" "$k")
		[ "$v" = 0 ] || fail "$unwind: $k is '$v', expected 0"
	done
	in_range "$(calc "$kernel / $total")" 0.85 1.0 ||
		fail "$unwind: $kernel of $total samples have kernel frames (want >= 85%)"
	summary="$summary $unwind: $stacks stacks, $kernel samples with kernel frames, none lost;"
done
pass "${summary# }"
