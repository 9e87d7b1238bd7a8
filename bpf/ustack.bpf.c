// SPDX-License-Identifier: GPL-2.0-only
/* Maps and configuration of the user-stack capture (see ustack.bpf.h). */
#include "ustack.bpf.h"

const volatile __u32 cfg_unwind_dwarf = 0;
const volatile __u32 cfg_stack_size = 16384;
const volatile __u32 cfg_nr_cpus = 1;
const volatile __u32 cfg_python = 0;
const volatile __u32 cfg_gil = 0;		/* what gil.bpf.h declares */
__u32 lp_gil_epoch = 0;

struct ustack_scratch_map ustack_scratch SEC(".maps");
struct ustacks_map ustacks SEC(".maps");
struct py_procs_map py_procs SEC(".maps");
struct py_tstates_map py_tstates SEC(".maps");
struct gil_threads_map gil_threads SEC(".maps");

char LICENSE[] SEC("license") = "GPL";
