/*
 * elfcfi.h - the unwind sections of an ELF file (--call-graph dwarf).
 *
 * The DWARF call frame information of an ELF file, for unwinding user
 * stacks at record time (format/unwind) and for UnwindTable packets:
 * .eh_frame and .eh_frame_hdr, or .debug_frame when the file has no
 * .eh_frame (a zlib-compressed .debug_frame is inflated here, which is
 * why this sits in the recorder and not in format/base/elf.h, the reader
 * it uses: base is libc only). Bytes are copied, so they live as long as
 * the struct. A file with none of them gives -ENODATA.
 *
 *   struct rec_elfcfi c;
 *   if (rec_elfcfi_read_fd(fd, &c) == 0) {
 *       ... c.eh_frame.data / .len / .addr, c.segs ...
 *       rec_elfcfi_release(&c);
 *   }
 *
 * Ownership: struct rec_elfcfi owns its section copies and segments;
 * release frees them (a zeroed struct is fine). Input bytes are
 * untrusted: a corrupt or truncated file gives a negative errno.
 */
#ifndef REC_ELFCFI_H
#define REC_ELFCFI_H

#include <stddef.h>
#include <stdint.h>

#include "format/base/elf.h"

/* Larger sections are refused (-EFBIG): the largest .eh_frame of a
 * Debian system, libLLVM's, is 9 MiB; the analyzer takes 256 MiB. */
#define REC_ELFCFI_MAX (64u << 20)

struct rec_elfcfi_sec {
	uint8_t *data;                 /* NULL: the file has no such section */
	size_t len;
	uint64_t addr;                 /* sh_addr */
};

struct rec_elfcfi {
	struct rec_elfcfi_sec eh_frame, eh_frame_hdr, debug_frame;
	struct prec_elf_seg *segs;     /* PT_LOAD, as in struct prec_elf */
	size_t nsegs;
	uint64_t load_bias;
	uint8_t build_id[64];
	size_t build_id_len;
};

/* 0, or -ENODATA (no unwind section), -EFBIG, and the errors of
 * prec_elf_read_fd / prec_elf_parse. On error *out is zeroed. */
int rec_elfcfi_read_fd(int fd, struct rec_elfcfi *out);   /* fd borrowed */
int rec_elfcfi_read_mem(const void *buf, size_t len, struct rec_elfcfi *out);
void rec_elfcfi_release(struct rec_elfcfi *c);   /* zeroed is fine */
/* Bytes held (sections and segments). */
size_t rec_elfcfi_bytes(const struct rec_elfcfi *c);

#endif
