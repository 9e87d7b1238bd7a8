# SPDX-License-Identifier: GPL-2.0-only
# latprof build. Non-recursive; `make V=1` prints full commands; objects and
# generated files live in build/. See README.md for the targets.

VERSION := 0.1.0

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
PKG_CONFIG ?= pkg-config

# SANITIZE=1 builds everything (program, unit tests, fixtures) with ASan and
# UBSan into its own tree, so it never mixes with the normal objects.
ifeq ($(SANITIZE),1)
BUILD := build-san
PROG := $(BUILD)/latprof
else
BUILD := build
PROG := latprof
endif
VMLINUX_H ?= $(BUILD)/vmlinux.h
PROFILE_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto

ifeq ($(CI),true)
WERROR ?= 1
endif

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wno-missing-field-initializers
ifeq ($(WERROR),1)
WARN += -Werror
endif

CFLAGS ?= -O2 -g
# -fno-sanitize-recover: a UBSan finding aborts, so the test that hit it fails.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
ifeq ($(SANITIZE),1)
CFLAGS += $(SAN_FLAGS) -fno-omit-frame-pointer
LDFLAGS += $(SAN_FLAGS)
endif
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -I. -I$(BUILD) -I$(BUILD)/proto -D_GNU_SOURCE -MMD -MP \
	-DLATPROF_VERSION='"$(VERSION)"'
LIBS := -lbpf -ldw -lelf -lz -lprotobuf-c -liberty -lm -lyaml
# serve's HTTP server: libmicrohttpd is not linked but opened by its soname
# when serve starts (src/mhd.h), with the TLS stack it pulls in
PROG_LIBS := -ldl -lpthread
# top's full screen (src/top_screen.c)
PROG_LIBS += $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null || echo -lncursesw)
MHD_SONAME := $(shell objdump -p "$$($(CC) -print-file-name=libmicrohttpd.so)" 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
GNUTLS_SONAME := $(shell objdump -p "$$($(CC) -print-file-name=libgnutls.so)" 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
$(BUILD)/src/mhd.o: ALL_CFLAGS += $(if $(MHD_SONAME),-DMHD_SONAME='"$(MHD_SONAME)"') \
	$(if $(GNUTLS_SONAME),-DGNUTLS_SONAME='"$(GNUTLS_SONAME)"')

# The library part: everything but the BPF session and the CLI, so unit tests
# build and run without clang, root or a kernel.
PROG_SRCS := src/main.c src/cmd_record.c src/record.c src/session.c \
	$(wildcard src/collect/*.c) src/intervals.c src/cmd_serve.c src/serve.c \
	src/serve_http.c src/serve_history.c src/mhd.c src/cmd_top.c src/top.c src/top_screen.c
LIB_SRCS := $(filter-out $(PROG_SRCS),$(wildcard src/*.c)) $(wildcard src/lib/*.c) $(wildcard symbolize/*.c) \
	$(wildcard flamegraph/*.c)
PROTO_C := $(BUILD)/proto/profile.pb-c.c
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/proto/profile.pb-c.o
PROG_OBJS := $(PROG_SRCS:%.c=$(BUILD)/%.o)

# The files that define maps other files declare extern come first (targets:
# common.bpf.h's; ustack: ustack.bpf.h's and python.bpf.h's; syscall:
# track.bpf.h's and waits.bpf.h's): libbpf 1.1's linker cannot relocate an
# extern map declared before its definition.
BPF_SHARED := bpf/targets.bpf.c bpf/ustack.bpf.c bpf/syscall.bpf.c
BPF_SRCS := $(BPF_SHARED) $(filter-out $(BPF_SHARED),$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(BPF_SRCS:%.c=$(BUILD)/%.o)
SKEL := $(BUILD)/latprof.skel.h

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)
FIXTURE_SRCS := $(wildcard tests/fixtures/*.c)
FIXTURE_CXX_SRCS := $(wildcard tests/fixtures/*.cpp)
FIXTURE_BINS := $(FIXTURE_SRCS:tests/fixtures/%.c=$(BUILD)/fixtures/%) \
	$(FIXTURE_CXX_SRCS:tests/fixtures/%.cpp=$(BUILD)/fixtures/%)
FIXTURE_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread
# Fixtures that must be built without frame pointers (DWARF unwinding tests).
FIXTURE_CFLAGS_nofp_chain := -O2 -g -fomit-frame-pointer -pthread
FIXTURE_CFLAGS_nofp_leaf := -O2 -g -fomit-frame-pointer -pthread
FIXTURE_CFLAGS_nofp_pie := -O2 -g -fomit-frame-pointer -fPIE -pie -pthread
FIXTURE_CFLAGS_nofp_nopie := -O2 -g -fomit-frame-pointer -fno-pie -no-pie -pthread
FIXTURE_CFLAGS_sys_pipe := -O2 -g -fomit-frame-pointer -pthread
# dbg_hot built twice more for the separate-debuginfo tests: with compressed
# DWARF sections, and without a build-id (so that only the .gnu_debuglink CRC
# can tell whose debug file it is).
DBG_HOT_VARIANTS := $(BUILD)/fixtures/dbg_hot_gz $(BUILD)/fixtures/dbg_hot_nobid
FIXTURE_BINS += $(DBG_HOT_VARIANTS)
FIXTURE_CFLAGS_dbg_hot_gz := $(FIXTURE_CFLAGS) -gz
FIXTURE_CFLAGS_dbg_hot_nobid := $(FIXTURE_CFLAGS) -Wl,--build-id=none

.PHONY: all setup browser-deps demo model-demo model-doc docs-images check check-unit check-e2e check-deps fixtures bench clean fuzz fuzz-run \
	check-fuzz check-valgrind check-valgrind-1 check-valgrind-2 check-kernels
# a recipe that fails leaves no half-written target that a later make would trust
.DELETE_ON_ERROR:
all: $(PROG)

$(PROG): $(PROG_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(PROG_LIBS)

$(BUILD)/%.o: %.c | $(BUILD)/proto/profile.pb-c.h
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Syscall names and numbers come from the kernel's UAPI header at build time.
SYSCALL_HDR ?= /usr/include/x86_64-linux-gnu/asm/unistd_64.h
$(BUILD)/gen/syscall_table.h: $(SYSCALL_HDR)
	@mkdir -p $(@D)
	$(call msg,GEN,$@)
	$(Q)awk '/^#define __NR_[a-z0-9_]+ [0-9]+$$/ { sub("__NR_", "", $$2); \
		printf "\t[%d] = \"%s\",\n", $$3, $$2 }' $< > $@.tmp && mv $@.tmp $@
$(BUILD)/src/syscalls.o: $(BUILD)/gen/syscall_table.h

# The flame graph viewer is plain JavaScript, embedded as a C string. It goes
# into a CDATA section, so it must not contain the section's end marker.
$(BUILD)/gen/viewer_js.h: flamegraph/viewer.js
	@mkdir -p $(@D)
	$(call msg,GEN,$@)
	$(Q)! grep -qF ']]>' $< || { echo "$<: contains ']]>'" >&2; exit 1; }
	$(Q){ echo 'static const char flame_viewer_js[] ='; \
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$$/\\n"/' $<; \
		echo ';'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/flamegraph/svg.o: $(BUILD)/gen/viewer_js.h

# Only the BPF session (src/collect/) sees the skeleton.
$(patsubst %.c,$(BUILD)/%.o,$(wildcard src/collect/*.c)): $(SKEL)

$(BUILD)/proto/profile.pb-c.c $(BUILD)/proto/profile.pb-c.h: $(PROFILE_PROTO)
	@mkdir -p $(BUILD)/proto
	$(call msg,PROTOC,$<)
	$(Q)$(PROTOC_C) --c_out=$(BUILD)/proto -I$(dir $(PROFILE_PROTO)) $(PROFILE_PROTO)

$(BUILD)/proto/profile.pb-c.o: $(BUILD)/proto/profile.pb-c.c
	$(call msg,CC,$<)
	$(Q)$(CC) -std=gnu11 $(CFLAGS) -I$(BUILD)/proto -c -o $@ $<

ifeq ($(VMLINUX_H),$(BUILD)/vmlinux.h)
$(VMLINUX_H):
	@mkdir -p $(@D)
	$(call msg,BTF,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@
endif

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H)
	@mkdir -p $(@D) $(BUILD)/vmlinux
	@# a temporary name per object: two built at once must not share one
	@cp -f $(VMLINUX_H) $(BUILD)/vmlinux/vmlinux.h.$(@F).new
	@cmp -s $(BUILD)/vmlinux/vmlinux.h.$(@F).new $(BUILD)/vmlinux/vmlinux.h && \
		rm -f $(BUILD)/vmlinux/vmlinux.h.$(@F).new || \
		mv $(BUILD)/vmlinux/vmlinux.h.$(@F).new $(BUILD)/vmlinux/vmlinux.h
	$(call msg,BPF,$<)
	$(Q)$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 $(if $(filter 1,$(WERROR)),-Werror) \
		-Wall -I$(BUILD)/vmlinux -Ibpf -MMD -MP -c $< -o $@

$(BUILD)/latprof.bpf.o: $(BPF_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@.tmp $^ && mv $@.tmp $@

$(SKEL): $(BUILD)/latprof.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name latprof_bpf > $@.tmp && mv $@.tmp $@

# Unit tests link the library part only. They run in a scratch directory and
# find their golden files (tests/golden, rewritten with UPDATE=1) from here.
$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -DLATPROF_SRCDIR='"$(CURDIR)"' $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LIBS)

$(BUILD)/fixtures/%: tests/fixtures/%.c tests/fixtures/fixture.h
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(or $(FIXTURE_CFLAGS_$*),$(FIXTURE_CFLAGS)) -o $@ $< -lm -ldl

$(DBG_HOT_VARIANTS): $(BUILD)/fixtures/dbg_hot_%: tests/fixtures/dbg_hot.c tests/fixtures/fixture.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIXTURE_CFLAGS_dbg_hot_$*) -o $@ $<

$(BUILD)/fixtures/%: tests/fixtures/%.cpp tests/fixtures/fixture.h
	@mkdir -p $(@D)
	$(call msg,CXX,$<)
	$(Q)$(CXX) $(or $(FIXTURE_CFLAGS_$*),$(FIXTURE_CFLAGS)) -o $@ $< -lm -ldl

fixtures: $(FIXTURE_BINS)

# What the tests run: this tree's program and fixtures. Under SANITIZE=1 a
# sanitizer report fails the test (ASan and UBSan abort, LeakSanitizer exits
# 23 at the end of a leaking process); tests/lsan.supp lists the leaks that
# are not ours.
TEST_ENV := LATPROF=$(CURDIR)/$(PROG) FIXTURES=$(CURDIR)/$(BUILD)/fixtures
ifeq ($(SANITIZE),1)
TEST_ENV += TEST_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
endif

check-unit: $(UNIT_BINS)
	$(Q)$(TEST_ENV) tests/run.sh unit $(UNIT_BINS)

# Every unit test under valgrind's memcheck: invalid accesses, uses of
# uninitialized values and definite leaks fail the test (tests/valgrind.supp
# lists what is not ours). The normal build, not the sanitized one.
VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --track-origins=yes --child-silent-after-fork=yes \
	--suppressions=$(CURDIR)/tests/valgrind.supp
# In two lanes (every other test), which make -j2 runs side by side: valgrind
# runs a program on one CPU. Each lane prints its own summary line.
VALGRIND_LANE1 := $(foreach i,$(shell seq 1 2 $(words $(UNIT_BINS))),$(word $(i),$(UNIT_BINS)))
VALGRIND_LANE2 := $(filter-out $(VALGRIND_LANE1),$(UNIT_BINS))
check-valgrind: check-valgrind-1 check-valgrind-2
check-valgrind-1 check-valgrind-2: check-valgrind-%: $(UNIT_BINS)
	$(Q)TEST_WRAPPER="$(VALGRIND)" TEST_TIMEOUT_S=600 tests/run.sh valgrind-$* $(VALGRIND_LANE$*)

# End-to-end scripts: tests/e2e, and tests/safety (privileges; root too).
E2E_TESTS := $(wildcard tests/e2e/test_*.sh tests/safety/test_*.sh)
# Left out of the sanitized run: test_symbolize_addr2line symbolizes latprof's
# own binary and wants 99.5% agreement with eu-addr2line; ASan's instrumentation
# reshapes the inline ranges of that binary, where the two disagree on about
# 0.5% of addresses (docs/security.md). The normal run keeps it.
# test_serve_rss measures glibc's malloc, which ASan replaces.
# test_speedscope_browser checks what chromium makes of an export that other
# tests write under ASan too. With TEST_SANITIZED=1 the interpreter matrices
# (tests/e2e/lib.sh, machine_pythons) run three CPythons, not seven: the
# sanitized run is for latprof's memory, the normal run checks every CPython.
# Both keep CI within its 30 minutes (docs/security.md, "What make check runs").
ifeq ($(SANITIZE),1)
E2E_TESTS := $(filter-out tests/e2e/test_symbolize_addr2line.sh tests/e2e/test_serve_rss.sh \
	tests/e2e/test_speedscope_browser.sh,$(E2E_TESTS))
endif

check-e2e: $(PROG) $(FIXTURE_BINS)
	$(Q)$(TEST_ENV) tests/run.sh e2e $(E2E_TESTS)

# One summary line for both suites. Then, unless CHECK_SAFETY=0 (or under
# SANITIZE=1, which runs only the sanitized suite): the same suite built with
# ASan+UBSan in build-san/, the unit tests under valgrind, and a replay of
# every fuzz target's seeds (docs/security.md).
# What the tests run is built on every CPU first (the sanitized build took
# 113 s alone); the tests themselves run one at a time.
CHECK_SAFETY ?= 1
NPROC := $(shell nproc 2>/dev/null || echo 2)
check: check-deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) $(PROG) $(UNIT_BINS) $(FIXTURE_BINS)
	$(Q)$(TEST_ENV) tests/run.sh all $(UNIT_BINS) $(E2E_TESTS)
ifneq ($(SANITIZE),1)
ifneq ($(CHECK_SAFETY),0)
	@echo "check: the same suite built with ASan+UBSan (build-san/)"
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 check
	@echo "check: unit tests under valgrind, beside the fuzz targets' seed corpora replayed"
	$(Q)$(MAKE) --no-print-directory -j2 check-valgrind check-fuzz
endif
endif

check-deps:
	$(Q)tests/check-deps.sh

# Reliability tests too long for CI (1,000 threads, a fork storm, an exec
# chain; docs/design.md, "Reliability tests"): root, about a minute.
.PHONY: check-long
check-long: latprof $(FIXTURE_BINS)
	$(Q)TEST_TIMEOUT_S=330 tests/run.sh long $(wildcard tests/long/test_*.sh)

# The e2e tests on Debian 12's own kernel (6.1), booted under qemu without KVM
# from a root that debootstrap makes once in build/kernels/ (docs/kernels.md):
# root; about 4 minutes, plus 5-10 for the first image. KERNEL_TESTS=all runs
# every e2e test (about 13 minutes), or names the tests to run.
KERNEL_TESTS ?=
check-kernels: $(PROG) $(FIXTURE_BINS)
	$(Q)$(TEST_ENV) tests/kernels/run.sh $(KERNEL_TESTS)

# libFuzzer targets, one binary per parser of untrusted input (docs/fuzzing.md):
# the library part built with clang, ASan and UBSan in its own object tree and
# archived, so each target links only what it calls. `make fuzz-run
# FUZZ_SECONDS=600` fuzzes each target in turn from a copy of its seeds;
# `make check-fuzz` (part of `make check`) replays the seeds once.
FUZZ_CC ?= clang-14
FUZZ_CFLAGS := -std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -I. -I$(BUILD) -I$(BUILD)/proto -D_GNU_SOURCE -MMD -MP \
	-DLATPROF_VERSION='"$(VERSION)"'
FUZZ_OBJS := $(LIB_SRCS:%.c=$(BUILD)/fuzz/obj/%.o) $(BUILD)/fuzz/obj/proto/profile.pb-c.o
FUZZ_LIB := $(BUILD)/fuzz/liblatprof.a
FUZZ_TARGETS ?= symbolize pprof folded perfmap serve_query config pycode
FUZZ_BINS := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_LIBS_serve_query := -lmicrohttpd
FUZZ_SECONDS ?= 60
FUZZ_FLAGS ?=
FUZZ_GEN := $(BUILD)/proto/profile.pb-c.h $(BUILD)/gen/syscall_table.h $(BUILD)/gen/viewer_js.h

$(BUILD)/fuzz/obj/%.o: %.c | $(FUZZ_GEN)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$<)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(WARN) -fsanitize=fuzzer-no-link -c -o $@ $<

$(BUILD)/fuzz/obj/proto/profile.pb-c.o: $(PROTO_C)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$<)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(WARN) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(LIBS) \
		$(FUZZ_LIBS_$*)

# fuzz_symbolize's seeds are built (ELF files compiled from the corpus sources);
# the other targets' seeds are the files in tests/fuzz/corpus/TARGET/.
$(BUILD)/fuzz/seeds.stamp: tests/fuzz/make-corpus.sh $(wildcard tests/fuzz/corpus/*)
	$(call msg,CORPUS,$(BUILD)/fuzz/seeds)
	$(Q)tests/fuzz/make-corpus.sh $(BUILD)/fuzz/seeds && touch $@

fuzz: $(FUZZ_BINS) $(BUILD)/fuzz/seeds.stamp

fuzz-run: fuzz
	$(Q)BUILD=$(BUILD) FUZZ_FLAGS="$(FUZZ_FLAGS)" tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

check-fuzz: fuzz
	$(Q)BUILD=$(BUILD) tests/fuzz/run.sh 0 $(FUZZ_TARGETS)

# Everything the build, the tests and the benchmarks need, from Debian.
DEB_PACKAGES := make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev libdw-dev libyaml-dev \
	zlib1g-dev libprotobuf-c-dev libmicrohttpd-dev libgnutls28-dev protobuf-c-compiler golang-github-google-pprof-dev \
	golang-go elfutils linux-perf bpftrace libbpf-tools time util-linux procps strace \
	libiberty-dev g++ libc6-dbg libpython3.11 debuginfod curl xz-utils libclang-rt-14-dev valgrind \
	nginx-light wrk chromium prometheus libxml2-utils nodejs python3-fastapi python3-uvicorn \
	python3-sklearn python3-flask python3-joblib gunicorn python3.11-dbg openssl python3-yaml \
	postgresql redis-server redis-tools debootstrap libncurses-dev tmux
# The Debian testing root that tests/e2e/test_python_chroot.sh runs python3.13-3.15 in
# (tests/pyroot/mkroot.sh; made once, about a minute, then kept until its recipe changes).
PYROOT_DIR ?= /var/cache/latprof/pyroot
setup:
	@if dpkg-query -W -f='$${Status}\n' $(DEB_PACKAGES) 2>/dev/null | \
		grep -qv 'install ok installed' || \
		[ $$(dpkg-query -W -f='$${Status}\n' $(DEB_PACKAGES) 2>/dev/null | wc -l) -ne \
		  $(words $(DEB_PACKAGES)) ]; then \
		apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			$(DEB_PACKAGES) >/dev/null; \
	else echo "setup: all packages present"; fi
	$(Q)$(MAKE) --no-print-directory browser-deps
	$(Q)tests/pyroot/mkroot.sh $(PYROOT_DIR) >/dev/null || \
		echo "setup: no Debian testing root in $(PYROOT_DIR); test_python_chroot will try again"

# The browser tests' npm packages (playwright-core, speedscope), pinned by
# tests/browser/package-lock.json; reinstalled only when the lock changes.
BROWSER_DIR := tests/browser
browser-deps: $(BROWSER_DIR)/node_modules/.package-lock.json
$(BROWSER_DIR)/node_modules/.package-lock.json: $(BROWSER_DIR)/package-lock.json
	$(call msg,NPM,$(BROWSER_DIR))
	$(Q)cd $(BROWSER_DIR) && npm ci --no-audit --no-fund --loglevel=error

# Record the bundled example, print the report, write folded stacks.
$(BUILD)/examples/demo_work: examples/demo/demo_work.c
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -o $@ $<

demo: latprof $(BUILD)/examples/demo_work
	./latprof record -F 499 -o $(BUILD)/demo.pb.gz -- $(BUILD)/examples/demo_work
	./latprof report $(BUILD)/demo.pb.gz
	./latprof export $(BUILD)/demo.pb.gz --format folded -o $(BUILD)/demo.folded
	./latprof export $(BUILD)/demo.pb.gz --format folded --weight latency \
		-o $(BUILD)/demo-latency.folded
	./latprof flamegraph $(BUILD)/demo.pb.gz -o $(BUILD)/demo.svg
	./latprof flamegraph $(BUILD)/demo.pb.gz --weight latency -o $(BUILD)/demo-latency.svg
	@echo "flame graphs (open in a browser): $(BUILD)/demo.svg (CPU), $(BUILD)/demo-latency.svg (slow syscalls)"
	@echo "folded stacks: $(BUILD)/demo.folded (CPU), $(BUILD)/demo-latency.folded (slow syscalls)"

# The model-serving walkthrough (docs/model-serving.md): the FastAPI example
# under load, recorded with request tracking, then report, latency flame graph
# and timeline (needs root).
model-demo: latprof
	@mkdir -p $(BUILD)/model
	PROFILE=$(BUILD)/model/serve.pb.gz PORT=18000 BACKEND_PORT=18001 \
		examples/model_server/run.sh fastapi 100 4
	./latprof report $(BUILD)/model/serve.pb.gz
	./latprof flamegraph $(BUILD)/model/serve.pb.gz --weight latency \
		-o $(BUILD)/model/serve-latency.svg
	./latprof timeline $(BUILD)/model/serve.pb.gz -o $(BUILD)/model/serve-timeline.svg
	@echo "latency flame graph: $(BUILD)/model/serve-latency.svg, timeline: $(BUILD)/model/serve-timeline.svg"

# docs/model-serving.md's blocks of real output rewritten from a fresh run of the
# model demo and of load_model.py (examples/model_server/doc.sh; root, ~20 s).
# tests/e2e/test_model_doc.sh fails when the committed doc no longer matches.
model-doc: latprof
	WORK=$(BUILD)/model PORT=18000 BACKEND_PORT=18001 examples/model_server/doc.sh

# The pictures in README.md and docs/: real recordings drawn by latprof,
# rendered to PNG by headless chromium (needs root and make setup).
docs-images: latprof $(BUILD)/examples/demo_work $(FIXTURE_BINS) browser-deps
	BUILD=$(BUILD) docs/img/render.sh

bench: latprof $(FIXTURE_BINS) bench-floor
	bench/cpu_overhead.sh
	bench/syscall_overhead.sh
	bench/nginx_throughput.sh

# The performance record: every comparison in one run, one table of ratios
# (bench/README.md); BENCH_ARGS=-q for the quick version.
.PHONY: bench-all
bench-all: latprof $(FIXTURE_BINS) bench-floor
	bench/all.sh $(BENCH_ARGS)

include bench/floor/floor.mk

clean:
	rm -rf build build-san latprof

-include $(shell find $(BUILD) -type f -name '*.d' 2>/dev/null)
