# SPDX-License-Identifier: GPL-2.0
# fuzz.mk - libFuzzer targets, the sanitizer builds of the tools and the
# malformed-input table.  Included by Makefile (OUT, CC, CFLAGS, all:).
# Always clang here, whatever CC is; nothing of this is in 'all'.
#
#   make OUT=d fuzz-short      both fuzzers FUZZ_SECONDS (60) each, for 'make test'
#   make OUT=d fuzz            the same, FUZZ_SECONDS (1800) each
#   make OUT=d fuzz-regress    $(TESTS)/fuzz-regress/ inputs once each (-strict builds)
#   make OUT=d asan-tools      $(OUT)/asan/sframe-{gen,dump,check}, ASan+UBSan
#   (asan-tools are what tests/host/63-sframe-malformed.sh runs)
#
# Seeds: fuzz/mkcorpus.sh makes $(OUT)/corpus-seed-{elf,sframe}; each run
# works on a copy, $(OUT)/corpus-{elf,sframe} (kept between runs, so a
# longer 'make fuzz' starts from what 'fuzz-short' found), plus the
# regression inputs $(TESTS)/fuzz-regress/{elf,sframe}-*.  Crashes are saved
# in $(OUT)/fuzz-artifacts/.  One process per fuzzer, one after the other:
# the machine has 2 cores and others need one.

FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	    -fno-omit-frame-pointer
FUZZ_CFLAGS ?= -g -O1 -Wall -Wextra -Wno-sign-compare -std=gnu11 -D_GNU_SOURCE
FUZZ_RSS_MB ?= 2048
FUZZ_TIMEOUT ?= 10
FUZZ_MAX_LEN ?= 65536
# fuzz-regress: a single allocation past this fails the input, so that
# one which once made libdw allocate a gigabyte (and run for seconds)
# fails at once, not only when it is slow enough
FUZZ_MALLOC_MB ?= 256

# (sframe.mk's SF_LIB/SF_HDR may be included after this file: own lists)
FUZZ_LIB := sframe-hdr.c sframe-ident.c sframe-read.c sframe-write.c elfin.c
FUZZ_HDR := sframe.h elfin.h cfi.h sframe-inject.h
FUZZ_ELF_SRC := fuzz/fuzz-elf.c cfi.c sframe-hdr.c sframe-ident.c sframe-read.c sframe-write.c elfin.c \
		sframe-inject.c
FUZZ_SFRAME_SRC := fuzz/fuzz-sframe.c sframe-hdr.c sframe-read.c sframe-write.c

.PHONY: fuzz fuzz-short fuzz-regress fuzz-corpus asan-tools

$(OUT)/fuzz-elf: $(FUZZ_ELF_SRC) $(FUZZ_HDR) | $(OUT)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ \
		$(FUZZ_ELF_SRC) $(LDLIBS_DW)
$(OUT)/fuzz-elf-strict: $(FUZZ_ELF_SRC) $(FUZZ_HDR) | $(OUT)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_STRICT_BUILD -fsanitize=fuzzer \
		$(FUZZ_SAN) -o $@ $(FUZZ_ELF_SRC) $(LDLIBS_DW)

$(OUT)/fuzz-sframe: $(FUZZ_SFRAME_SRC) $(FUZZ_HDR) | $(OUT)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ \
		$(FUZZ_SFRAME_SRC)
$(OUT)/fuzz-sframe-strict: $(FUZZ_SFRAME_SRC) $(FUZZ_HDR) | $(OUT)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_STRICT_BUILD -fsanitize=fuzzer \
		$(FUZZ_SAN) -o $@ $(FUZZ_SFRAME_SRC)

# The seed corpus needs a plain sframe-gen for the raw sections.
$(OUT)/corpus-seed-elf/.done: fuzz/mkcorpus.sh $(OUT)/sframe-gen
	rm -rf $(OUT)/corpus-seed-elf $(OUT)/corpus-seed-sframe
	SFRAME_GEN=$(OUT)/sframe-gen sh fuzz/mkcorpus.sh $(OUT)/corpus-seed
	mv $(OUT)/corpus-seed/elf $(OUT)/corpus-seed-elf
	mv $(OUT)/corpus-seed/sframe $(OUT)/corpus-seed-sframe
	rmdir $(OUT)/corpus-seed
	touch $@

fuzz-corpus: $(OUT)/corpus-seed-elf/.done

# $(call fuzz_run,NAME,SECONDS): NAME over a copy of its seeds; prints
# "NAME: N runs, C crashes" and fails on a crash, leak, timeout or OOM.
# libFuzzer's slow units (over 10 s, under -timeout) are said apart: one
# seen was 18 s in a run and 0.09 s alone.
define fuzz_run
	@set -e; n=$(1); o=$(OUT); \
	mkdir -p $$o/corpus-$$n $$o/fuzz-artifacts $$o/fuzz-logs; \
	cp -n $$o/corpus-seed-$$n/* $$o/corpus-$$n/ 2>/dev/null || true; \
	for f in $(TESTS)/fuzz-regress/$$n-*; do \
		[ -f "$$f" ] && cp -n "$$f" $$o/corpus-$$n/ || true; done; \
	before=$$(ls $$o/fuzz-artifacts | grep -vc -- '-slow-unit-' || true); \
	slow0=$$(ls $$o/fuzz-artifacts | grep -c -- '-slow-unit-' || true); \
	log=$$o/fuzz-logs/$$n.log; \
	echo "$$n: $(2) s on $$o/corpus-$$n (log $$log)"; \
	rc=0; $$o/fuzz-$$n -max_total_time=$(2) -rss_limit_mb=$(FUZZ_RSS_MB) \
		-timeout=$(FUZZ_TIMEOUT) -max_len=$(FUZZ_MAX_LEN) \
		-print_final_stats=1 \
		-artifact_prefix=$$o/fuzz-artifacts/$$n- \
		$$o/corpus-$$n > $$log 2>&1 || rc=$$?; \
	runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log | tail -1); \
	[ -n "$$runs" ] || runs=$$(sed -n 's/^#\([0-9]*\).*/\1/p' $$log | tail -1); \
	crashes=$$(( $$(ls $$o/fuzz-artifacts | grep -vc -- '-slow-unit-' || true) - before )); \
	slow=$$(( $$(ls $$o/fuzz-artifacts | grep -c -- '-slow-unit-' || true) - slow0 )); \
	[ $$rc = 0 ] || [ $$crashes -gt 0 ] || crashes=1; \
	echo "$$n: $${runs:-0} runs, $$crashes crashes"; \
	[ $$slow = 0 ] || echo "$$n: $$slow slow units (over 10 s, not -timeout=$(FUZZ_TIMEOUT): a stall of the machine, or look at them)"; \
	if [ $$rc != 0 ]; then \
		grep -E -A40 '^==[0-9]+==ERROR|runtime error|oracle:|SUMMARY' $$log | head -80; \
		echo "$$n: FAILED (exit $$rc), artifacts in $$o/fuzz-artifacts/"; \
		exit 1; fi
endef

# Each regression input once, without the fuzz targets' work-arounds for
# known bugs: they fail until those bugs are fixed.
fuzz-regress: $(OUT)/fuzz-elf-strict $(OUT)/fuzz-sframe-strict
	@set -e; fail=0; for n in elf sframe; do \
		set -- $(TESTS)/fuzz-regress/$$n-*; [ -f "$$1" ] || continue; \
		for f; do \
			if $(OUT)/fuzz-$$n-strict -runs=1 \
				-timeout=$(FUZZ_TIMEOUT) \
				-malloc_limit_mb=$(FUZZ_MALLOC_MB) "$$f" \
				> $(OUT)/fuzz-regress.log 2>&1; then \
				echo "ok - fuzz-regress $$f"; \
			else echo "not ok - fuzz-regress $$f"; fail=1; \
				grep -E -m3 'ERROR|runtime error|oracle:' \
					$(OUT)/fuzz-regress.log | sed 's/^/    # /'; \
			fi; done; done; exit $$fail

fuzz-short: $(OUT)/fuzz-elf $(OUT)/fuzz-sframe fuzz-corpus
	$(call fuzz_run,elf,$(or $(FUZZ_SECONDS),60))
	$(call fuzz_run,sframe,$(or $(FUZZ_SECONDS),60))

fuzz: $(OUT)/fuzz-elf $(OUT)/fuzz-sframe fuzz-corpus
	$(call fuzz_run,elf,$(or $(FUZZ_SECONDS),1800))
	$(call fuzz_run,sframe,$(or $(FUZZ_SECONDS),1800))

# ---- the tools under ASan + UBSan ----

ASAN_TOOLS := $(OUT)/asan/sframe-gen $(OUT)/asan/sframe-dump \
	      $(OUT)/asan/sframe-check

asan-tools: $(ASAN_TOOLS)

$(OUT)/asan:
	mkdir -p $@

$(OUT)/asan/sframe-gen: sframe-gen.c cfi.c sframe-inject.c $(FUZZ_LIB) $(FUZZ_HDR) | $(OUT)/asan
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ $(filter %.c,$^) $(LDLIBS_DW)
$(OUT)/asan/sframe-dump: sframe-dump.c $(FUZZ_LIB) $(FUZZ_HDR) | $(OUT)/asan
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ $(filter %.c,$^) $(LDLIBS_DW)
$(OUT)/asan/sframe-check: sframe-check.c cfi.c $(FUZZ_LIB) $(FUZZ_HDR) | $(OUT)/asan
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ $(filter %.c,$^) $(LDLIBS_DW)

