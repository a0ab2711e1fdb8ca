# SPDX-License-Identifier: GPL-2.0
# audit.mk - sframe-audit.so, the LD_AUDIT helper that registers SFrame
# sections of shared objects with the kernel, and its host test.
# Included by Makefile (OUT, CC, CFLAGS, all:).
#   make OUT=dir all         builds everything below into OUT
#   make OUT=dir test-audit  runs tests/audit.sh

AUDIT_BINS := $(OUT)/sframe-audit.so $(OUT)/sframe-audit-filephdr.so \
	      $(OUT)/prctl-stub $(OUT)/dlopen-loop $(OUT)/cancel-loop \
	      $(OUT)/libloop-a.so $(OUT)/libloop-b.so $(OUT)/libloop-c.so

all: $(AUDIT_BINS)

AUDIT_SRC := sframe-audit.c sframe-hdr.c sframe-ident.c

# Only the la_* entry points are exported.
$(OUT)/sframe-audit.so: $(AUDIT_SRC) sframe.h | $(OUT)
	$(CC) $(CFLAGS) -fPIC -shared -fvisibility=hidden $(LDFLAGS) -o $@ \
		$(AUDIT_SRC)

# The same, reading program headers from the file only (fallback path).
$(OUT)/sframe-audit-filephdr.so: $(AUDIT_SRC) sframe.h | $(OUT)
	$(CC) $(CFLAGS) -DSFRAME_AUDIT_FILE_PHDRS -fPIC -shared \
		-fvisibility=hidden $(LDFLAGS) -o $@ $(AUDIT_SRC)

$(OUT)/prctl-stub: tests/prctl-stub.c sframe-hdr.c sframe.h | $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/prctl-stub.c sframe-hdr.c

$(OUT)/dlopen-loop: tests/dlopen-loop.c | $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -ldl -lpthread

$(OUT)/cancel-loop: tests/cancel-loop.c | $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -ldl -lpthread

$(OUT)/libloop-%.so: tests/libloop-%.c | $(OUT)
	$(CC) $(CFLAGS) -O2 -fomit-frame-pointer -fPIC -shared $(LDFLAGS) \
		-o $@ $<

test-audit: all
	bash tests/audit.sh $(OUT)

.PHONY: test-audit
