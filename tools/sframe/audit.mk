# SPDX-License-Identifier: GPL-2.0
# audit.mk - sframe-audit.so, the LD_AUDIT helper that registers SFrame
# sections of shared objects with the kernel, and its host test.
# Included by Makefile (OUT, CC, CFLAGS, all:).
#   make OUT=dir all         builds everything below into OUT
#   make OUT=dir test-audit  runs tests/audit.sh

AUDIT_BINS := $(OUT)/sframe-audit.so $(OUT)/sframe-audit-filephdr.so \
	      $(OUT)/prctl-stub $(OUT)/dlopen-loop \
	      $(OUT)/libloop-a.so $(OUT)/libloop-b.so

all: $(AUDIT_BINS)

$(OUT)/sframe-audit.so: sframe-audit.c sframe.h | $(OUT)
	$(CC) $(CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $<

# The same, reading program headers from the file only (fallback path).
$(OUT)/sframe-audit-filephdr.so: sframe-audit.c sframe.h | $(OUT)
	$(CC) $(CFLAGS) -DSFRAME_AUDIT_FILE_PHDRS -fPIC -shared $(LDFLAGS) \
		-o $@ $<

$(OUT)/prctl-stub: tests/prctl-stub.c sframe.h | $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(OUT)/dlopen-loop: tests/dlopen-loop.c | $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -ldl

$(OUT)/libloop-%.so: tests/libloop-%.c | $(OUT)
	$(CC) $(CFLAGS) -O2 -fomit-frame-pointer -fPIC -shared $(LDFLAGS) \
		-o $@ $<

test-audit: all
	bash tests/audit.sh $(OUT)

.PHONY: test-audit
