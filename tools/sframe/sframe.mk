# SPDX-License-Identifier: GPL-2.0
# sframe-gen, sframe-dump, sframe-check (included by Makefile)
SF_LIB := sframe-hdr.c sframe-ident.c sframe-read.c sframe-write.c elfin.c
SF_HDR := sframe.h elfin.h cfi.h sframe-inject.h

all: $(OUT)/sframe-gen $(OUT)/sframe-dump

$(OUT)/sframe-gen: sframe-gen.c cfi.c sframe-inject.c $(SF_LIB) $(SF_HDR) | $(OUT)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) $(LDLIBS_DW)
$(OUT)/sframe-dump: sframe-dump.c $(SF_LIB) $(SF_HDR) | $(OUT)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) $(LDLIBS_DW)
all: $(OUT)/sframe-check
$(OUT)/sframe-check: sframe-check.c cfi.c $(SF_LIB) $(SF_HDR) | $(OUT)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) $(LDLIBS_DW)
