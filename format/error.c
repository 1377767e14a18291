/*
 * error.c - names for PREC_E_* codes and negative errno values.
 */
#include <string.h>

#include "format/error.h"

#define PREC_STR_(x) #x
#define PREC_STR(x) PREC_STR_(x)

const char *prec_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case PREC_E_TRUNCATED: return "file ends inside a frame (torn tail)";
	case PREC_E_CHECKSUM: return "checksum mismatch (damaged frame)";
	case PREC_E_VERSION: return "file format version is newer than this reader";
	case PREC_E_MAGIC: return "unknown file type (bad magic)";
	case PREC_E_CORRUPT: return "structurally invalid bytes";
	case PREC_E_TOO_BIG: return "size exceeds the format's or the reader's limits";
	case PREC_E_DECOMPRESS: return "zstd could not decompress the frame";
	case PREC_E_DECODE: return "packet did not decode";
	case PREC_E_NO_INDEX: return "file has no trailing index";
	case PREC_E_COMPRESS: return "zstd could not compress the frame";
	case PREC_E_CLOSED: return "writer already closed or failed";
	case PREC_E_CFI: return "malformed unwind table (DWARF CFI)";
	case PREC_E_CFI_UNSUPPORTED: return "unsupported DWARF CFI instruction or encoding";
	case PREC_E_HEADER: return "damaged file header; the frames after it are read";
	case PREC_E_RATIO: return "frame would decompress to over " PREC_STR(PREC_MAX_RATIO)
				  " times its size (decompression bomb?)";
	default: break;
	}
	/* strerror() is not thread-safe in general, but glibc and macOS return
	 * static strings for known errno values; unknown values get ours. */
	if (err < 0 && err > -4096) {
		const char *s = strerror(-err);
		return s ? s : "unknown error";
	}
	return "unknown error";
}
