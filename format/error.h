/*
 * error.h - error codes of the format library.
 *
 * Functions that return int return 0 (or a count) on success and a negative
 * number on failure: either -errno (I/O, allocation) or one of the named
 * format faults below, which lie outside the errno range. prec_strerror()
 * names both kinds.
 */
#ifndef PREC_ERROR_H
#define PREC_ERROR_H

enum prec_error {
	PREC_E_FIRST = 10000,
	PREC_E_TRUNCATED = -10001,  /* bytes end inside a frame (torn tail) */
	PREC_E_CHECKSUM = -10002,   /* zstd content checksum or metadata CRC mismatch */
	PREC_E_VERSION = -10003,    /* file major version newer than this reader */
	PREC_E_MAGIC = -10004,      /* not a .prec file */
	PREC_E_CORRUPT = -10005,    /* structurally invalid bytes */
	PREC_E_TOO_BIG = -10006,    /* a size exceeds the format's or the reader's limits */
	PREC_E_DECOMPRESS = -10007, /* zstd refused the frame */
	PREC_E_DECODE = -10008,     /* protobuf packet did not decode */
	PREC_E_NO_INDEX = -10009,   /* file has no trailing index */
	PREC_E_COMPRESS = -10010,   /* zstd failed to compress */
	PREC_E_CLOSED = -10011,     /* writer already closed or failed */
	PREC_E_CFI = -10012,        /* unwind table (DWARF CFI) bytes do not parse */
	PREC_E_CFI_UNSUPPORTED = -10013, /* CFI instruction, op or encoding we do not know */
	PREC_E_HEADER = -10014,     /* file header damaged; the frames after it are read */
	PREC_E_RATIO = -10015,      /* frame claims more content than PREC_MAX_RATIO allows */
};

/* Readers refuse a frame whose content is more than this many times its
 * compressed bytes (SPEC.md section 5, "limits"), before decompressing it.
 * Traces compress 2-10 times (perfrec recordings ~5, the test traces up
 * to 9); zstd itself reaches ~32000 on runs of one byte, which is what a
 * crafted file uses to make a reader decompress gigabytes out of a few
 * kilobytes. 1024 leaves a hundredfold margin above real data and bounds
 * what any file decompresses to 1024 times its size. */
#define PREC_MAX_RATIO 1024

/* A static string for any value returned by this library: a PREC_E_* code
 * or a negative errno. Never NULL. */
const char *prec_strerror(int err);

#endif
