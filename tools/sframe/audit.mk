# SPDX-License-Identifier: GPL-2.0
# audit.mk - sframe-audit.so, the LD_AUDIT helper that registers SFrame
# sections of shared objects with the kernel, and the helper programs of
# its test (tests/host/62-sframe-audit.sh).  Included by Makefile (OUT,
# CC, CFLAGS, TESTS, all:).
#   make OUT=dir all         builds everything below into OUT

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

$(OUT)/prctl-stub: $(TESTS)/prctl-stub.c sframe-hdr.c sframe.h | $(OUT)
	$(CC) $(CFLAGS) -I. $(LDFLAGS) -o $@ $(TESTS)/prctl-stub.c sframe-hdr.c

$(OUT)/dlopen-loop: $(TESTS)/dlopen-loop.c | $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -ldl -lpthread

$(OUT)/cancel-loop: $(TESTS)/cancel-loop.c | $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -ldl -lpthread

$(OUT)/libloop-%.so: $(TESTS)/libloop-%.c | $(OUT)
	$(CC) $(CFLAGS) -O2 -fomit-frame-pointer -fPIC -shared $(LDFLAGS) \
		-o $@ $<
