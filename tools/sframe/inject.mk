# SPDX-License-Identifier: GPL-2.0
# sframe-inject: ELF injection of .sframe + PT_GNU_SFRAME.  Included by
# Makefile, which defines OUT, CC, CFLAGS, all: and the $(OUT) rule.
#
#   make all            sframe-inject.o, inject-test, inject-test-san (the
#                       driver of tests/host/61-sframe-inject.sh)
#   make fuzz-inject    libFuzzer run (clang), INJECT_FUZZ_TIME seconds

INJECT_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	      -fno-omit-frame-pointer
INJECT_FUZZ_CC ?= clang
INJECT_FUZZ_TIME ?= 60
INJECT_SEEDS := $(wildcard ../../tests/vectors/vec_plt \
			   ../../tests/vectors/libvec.so)

all: $(OUT)/sframe-inject.o $(OUT)/inject-test $(OUT)/inject-test-san
.PHONY: fuzz-inject

$(OUT)/sframe-inject.o: sframe-inject.c sframe-inject.h | $(OUT)
	$(CC) $(CFLAGS) -c -o $@ $<

$(OUT)/inject-test: $(TESTS)/inject-test.c $(OUT)/sframe-inject.o sframe-inject.h | $(OUT)
	$(CC) $(CFLAGS) -I. -o $@ $(TESTS)/inject-test.c $(OUT)/sframe-inject.o

# The same driver with the library built in, under ASan and UBSan.
$(OUT)/inject-test-san: $(TESTS)/inject-test.c sframe-inject.c sframe-inject.h | $(OUT)
	$(CC) $(CFLAGS) -I. $(INJECT_SAN) -o $@ $(TESTS)/inject-test.c sframe-inject.c

$(OUT)/inject-fuzz: $(TESTS)/inject-test.c sframe-inject.c sframe-inject.h | $(OUT)
	$(INJECT_FUZZ_CC) -g -O1 -DSF_FUZZ -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -I. -o $@ $(TESTS)/inject-test.c sframe-inject.c

# Seeds: real files behind a 2-byte seclen (0x100).
fuzz-inject: $(OUT)/inject-fuzz
	mkdir -p $(OUT)/inject-corpus
	for f in $(INJECT_SEEDS); do \
		{ printf '\000\001'; cat $$f; } > $(OUT)/inject-corpus/seed-$$(basename $$f); \
	done
	$(OUT)/inject-fuzz -max_total_time=$(INJECT_FUZZ_TIME) -max_len=65536 \
		-artifact_prefix=$(OUT)/ $(OUT)/inject-corpus
