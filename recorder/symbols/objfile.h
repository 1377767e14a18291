/*
 * objfile.h - the file of an object the gatherer saw mapped: found
 * through the process's view or its path, checked against the mapping's
 * build-id; or, for the [vdso], this process's own image. Used by
 * symwrite.c (symbols, function ranges) and symunwind.c (unwind
 * sections); calls only addrspace_int.h's state, elfcfi.h and format/.
 */
#ifndef REC_OBJFILE_H
#define REC_OBJFILE_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/symbols/addrspace_int.h"

/* Opens the file of o for reading: through the process's own view first
 * (map_files survives deletion, /proc/PID/root sees its mount
 * namespace), then the plain path; a file whose build-id differs from
 * the mapping's is skipped. Returns the fd, or < 0 with *why set when
 * there is more to say than the errno. Not for the [vdso]. */
int rec_symgather_obj_open(const struct rec_symgather *sc,
			   const struct sc_obj *o, const char **why);
/* This process's own [vdso] image (the same kernel's as every native
 * process's): 0 and *img, *len, or -errno. */
int rec_symgather_vdso(const void **img, size_t *len);
/* -ESTALE with *why when the build-id read from our [vdso] is not the one
 * o's mapping gave (another vDSO, e.g. of a 32-bit process), else 0. */
int rec_symgather_vdso_mismatch(const struct sc_obj *o, const uint8_t *bid,
				size_t bid_len, const char **why);
/* o's CFI (its unwind sections and their table), read from its file at
 * the first call and kept until the gatherer is freed: the unwinder's
 * rules and, for addresses no symbol holds, the function ranges of its
 * FDEs. NULL when it cannot be read: then never tried again (o->cfi_err,
 * o->cfi_why), except after ENOMEM. */
struct sc_cfi *rec_symgather_obj_cfi(struct rec_symgather *sc, struct sc_obj *o);

#endif
