# SPDX-License-Identifier: GPL-2.0
#
# make demo        build everything, boot the patched kernel, profile
#                  programs built without frame pointers, print their
#                  stacks, write a flame graph
# make test        build what is stale, run every test, "N passed, N failed"
# make test-debug  the guest tests on the debug kernel (lockdep, KASAN, ...)
# make help        everything else

REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD_DIR ?= $(abspath $(REPO)/../build-$(notdir $(REPO)))
export BUILD_DIR
TREE ?= $(BUILD_DIR)/linux
export TREE

KERNEL := $(BUILD_DIR)/kbuild/guest/arch/x86/boot/bzImage
KERNEL_DEBUG := $(BUILD_DIR)/kbuild/debug/arch/x86/boot/bzImage
PERF := $(BUILD_DIR)/perf/perf
WORKLOADS := $(BUILD_DIR)/workloads
SFRAME_TOOLS := $(BUILD_DIR)/sframe-tools

# The build graph.  Every script builds through these targets; KVARIANT
# picks the kernel (guest, debug, debug-lazy, bench, nounwind) whose
# headers the test programs are built against.
KVARIANT ?= guest
KVARIANTS := guest debug debug-lazy bench nounwind
ifeq ($(filter $(KVARIANT),$(KVARIANTS)),)
$(error KVARIANT=$(KVARIANT): one of $(KVARIANTS))
endif
KHDR := $(BUILD_DIR)/kbuild/$(KVARIANT)/usr/include
LOADS := OUT=$(WORKLOADS) KHDR=$(KHDR) SFRAME_GEN=$(SFRAME_TOOLS)/sframe-gen

.PHONY: help deps tree tree-reset tree-status export kernel \
	$(addprefix kernel-,$(KVARIANTS)) perf perf-asan workloads kfuzz-load sframe-tools-asan \
	soak-load selftests build test-build soak-build bench-build demo-build \
	test test-debug bench bench-unwind demo vm checkpatch perf-test-suite sframe-tools \
	fuzz kfuzz soak series-check deb deb-test

help:
	@sed -n '3,8s/^# \{0,1\}//p' Makefile
	@echo "make deps         apt-get install what is missing"
	@echo "make tree         unpack linux-source + apply patches/ into $(TREE)"
	@echo "make tree-status  does $(TREE) match patches/?"
	@echo "make tree-reset   re-create $(TREE), discarding local work"
	@echo "make export       write $(TREE)'s commits back into patches/"
	@echo "make kernel       $(KERNEL)"
	@echo "make kernel-V     the kernel variant V: guest, debug (lockdep, KASAN, ...), debug-lazy,"
	@echo "                  bench (no checkers), nounwind (no CONFIG_UNWIND_USER)"
	@echo "make perf         $(PERF) (perf-asan: with AddressSanitizer)"
	@echo "make workloads    test programs in $(WORKLOADS), against the headers of kernel-\$$KVARIANT (guest)"
	@echo "make build        kernel, perf, workloads, kselftests (KVARIANT=debug: on the debug kernel)"
	@echo "make test-build   what make test runs on (also: soak-build, bench-build, demo-build)"
	@echo "make sframe-tools sframe-gen, sframe-dump, sframe-check, sframe-audit.so in $(SFRAME_TOOLS)"
	@echo "                  (and the programs their tests drive; sframe-tools-asan: under ASan+UBSan)"
	@echo "make fuzz         make kfuzz, then fuzz the SFrame tools' ELF/CFI and section input (FUZZ_SECONDS each, 1800)"
	@echo "make kfuzz        1M mutated .sframe sections through the debug kernel in QEMU (scripts/kfuzz.sh)"
	@echo "                  (KFUZZ_KERNEL=debug-lazy: without CONFIG_UNWIND_USER_SFRAME_VALIDATE, so that"
	@echo "                  bad sections are removed at first use; KFUZZ_KERNEL=guest: no checkers)"
	@echo "make soak         perf record -a --call-graph fp,defer sessions under load, SOAK_SECONDS (600),"
	@echo "                  on the debug kernel (SOAK_KERNEL=guest: the plain one; scripts/soak.sh)"
	@echo "make selftests    kselftests (perf_events, sframe) in $(BUILD_DIR)/kselftest"
	@echo "make vm CMD='...' boot the kernel and run CMD (or: scripts/vm -- CMD)"
	@echo "make checkpatch   scripts/checkpatch.pl on every patch of the series"
	@echo "make series-check build the state after every patch: which one breaks (scripts/series-check.sh)"
	@echo "make bench        benchmarks in the guest, report in $(BUILD_DIR)/bench-results"
	@echo "make bench-unwind the kernel unwinder's cost per frame and per sample alone"
	@echo "make deb          Debian packages in $(BUILD_DIR)/deb/\$$DEB_NAME (host): the kernel configured from"
	@echo "                  BASE_CONFIG (/boot/config-\$$(uname -r)) + config/series.config, perf, the SFrame tools"
	@echo "make perf-test-suite  whole perf test suite in the guest, before/after the perf patches"

deps:
	@$(REPO)/scripts/deps.sh

tree: deps
	@$(REPO)/scripts/tree.sh prepare
tree-reset: deps
	@FORCE=1 $(REPO)/scripts/tree.sh fresh
tree-status:
	@$(REPO)/scripts/tree.sh status
export:
	@$(REPO)/scripts/tree.sh export

# The build graph.  Every script builds through these targets.
kernel: kernel-guest
$(addprefix kernel-,$(KVARIANTS)): kernel-%: tree
	@$(REPO)/scripts/build-kernel.sh $*
perf: tree
	@$(REPO)/scripts/build-perf.sh
perf-asan: tree
	@$(REPO)/scripts/build-perf.sh asan
sframe-tools: deps
	@$(MAKE) -s -C $(REPO)/tools/sframe OUT=$(SFRAME_TOOLS) all
sframe-tools-asan: deps
	@$(MAKE) -s -C $(REPO)/tools/sframe OUT=$(SFRAME_TOOLS) asan-tools
workloads: kernel-$(KVARIANT) sframe-tools
	@$(MAKE) -s -C $(REPO)/tests/workloads $(LOADS)
kfuzz-load: kernel-$(KVARIANT) sframe-tools
	@$(MAKE) -s -C $(REPO)/tests/workloads $(LOADS) kfuzz
soak-load: kernel-$(KVARIANT) sframe-tools
	@$(MAKE) -s -C $(REPO)/tests/soak OUT=$(BUILD_DIR)/soak KHDR=$(KHDR) \
		SFRAME_GEN=$(SFRAME_TOOLS)/sframe-gen
selftests: kernel-$(KVARIANT)
	@$(REPO)/scripts/build-selftests.sh $(KVARIANT)
build: kernel-$(KVARIANT) perf workloads selftests
# What each script runs on (the scripts call these):
test-build: build perf-asan sframe-tools-asan soak-load $(if $(filter guest,$(KVARIANT)),kernel-nounwind deb-test)
soak-build: build soak-load
bench-build: kernel-bench perf sframe-tools
# Debian packages: the kernel from BASE_CONFIG (the running kernel's by
# default) + config/series.config, perf, the SFrame tools; deb-test: the
# same from the nounwind kernel's configuration (the guest's without the
# series' options), which tests/host/45-deb.sh boots
BASE_CONFIG ?= /boot/config-$(shell uname -r)
DEB_NAME ?= host
deb: perf sframe-tools
	@$(REPO)/scripts/deb.sh "$(BASE_CONFIG)" "$(DEB_NAME)"
deb-test: kernel-nounwind perf sframe-tools
	@$(REPO)/scripts/deb.sh $(BUILD_DIR)/kbuild/nounwind/.config test
demo-build: build

fuzz: deps kfuzz
	@$(MAKE) -s -C $(REPO)/tools/sframe OUT=$(SFRAME_TOOLS) fuzz
kfuzz: deps
	@$(REPO)/scripts/kfuzz.sh
soak: deps
	@$(REPO)/scripts/soak.sh

vm:
	@$(REPO)/scripts/vm -- sh -c '$(CMD)'

test:
	@$(REPO)/scripts/test.sh
test-debug:
	@$(REPO)/scripts/test.sh --debug
bench:
	@$(REPO)/scripts/bench.sh
bench-unwind:
	@BENCH_ONLY=unwind $(REPO)/scripts/bench.sh
perf-test-suite: build
	@$(REPO)/scripts/perf-test-suite.sh
demo:
	@$(REPO)/scripts/demo.sh

# CAMELCASE: the only CamelCase names are the C library's (Elf64_Sym,
# _Static_assert in the selftests), which --no-tree cannot tell from ours.
# checkpatch leaves a CamelCase cache in a git tree: it is removed, so that
# the tree stays clean.
# perf shell tests carry their name on line 2 (perf test reads it there),
# so their SPDX line is the third: checkpatch's SPDX check is off for them.
# The state after every patch builds (the objects it touches; perf).
series-check: tree kernel
	@$(REPO)/scripts/series-check.sh

checkpatch: tree
	@cd $(TREE) && n=0; for p in $(REPO)/patches/[0-9][0-9]-*/[0-9][0-9][0-9][0-9]-*.patch; do \
		[ -f "$$p" ] || continue; \
		case $$p in */0000-cover-letter.patch) continue;; esac; \
		n=$$((n + 1)); ign=CAMELCASE; \
		grep -q '^+++ b/tools/perf/tests/shell/.*\.sh$$' $$p && ign=$$ign,SPDX_LICENSE_TAG; \
		scripts/checkpatch.pl --quiet --no-tree --strict --ignore $$ign $$p || \
		{ rm -f .checkpatch-camelcase.*; exit 1; }; done; \
		rm -f .checkpatch-camelcase.*; echo "checkpatch: $$n patches clean"
