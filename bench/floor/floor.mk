# SPDX-License-Identifier: GPL-2.0-only
# The floor of syscall tracing for bench/syscall_overhead.sh and
# bench/nginx_throughput.sh: $(BUILD)/bench/floor loads two empty BPF
# programs on tp_btf/sys_enter and tp_btf/sys_exit (the hooks of latprof's
# syscall collector). Included from the top Makefile, whose BUILD, CC, CLANG,
# BPFTOOL, PKG_CONFIG, VMLINUX_H (and its generating rule), CFLAGS, WARN, Q
# and msg it uses:
#
#	include bench/floor/floor.mk
#
# `make bench-floor` builds it. Intermediate files go to $(BUILD)/bench/.

FLOOR_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
FLOOR_OUT := $(BUILD)/bench
FLOOR_LIBBPF_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
FLOOR_LIBBPF_LIBS := $(or $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null),-lbpf)

.PHONY: bench-floor
bench-floor: $(FLOOR_OUT)/floor

# The BPF side sees vmlinux.h under that name, whatever VMLINUX_H is called.
$(FLOOR_OUT)/floor.bpf.o: $(FLOOR_DIR)/floor.bpf.c $(VMLINUX_H)
	@mkdir -p $(FLOOR_OUT)/vmlinux
	@cp -f $(VMLINUX_H) $(FLOOR_OUT)/vmlinux/vmlinux.h
	$(call msg,BPF,$<)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 $(if $(filter 1,$(WERROR)),-Werror) \
		-Wall $(FLOOR_LIBBPF_CFLAGS) -I$(FLOOR_OUT)/vmlinux -c $< -o $@

$(FLOOR_OUT)/floor.skel.h: $(FLOOR_OUT)/floor.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@.tmp && mv $@.tmp $@

$(FLOOR_OUT)/floor: $(FLOOR_DIR)/floor.c $(FLOOR_OUT)/floor.skel.h
	$(call msg,CC,$<)
	$(Q)$(CC) -std=gnu11 $(WARN) $(CFLAGS) -I$(FLOOR_OUT) $(FLOOR_LIBBPF_CFLAGS) \
		$(LDFLAGS) -o $@ $< $(FLOOR_LIBBPF_LIBS)
