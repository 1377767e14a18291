/*
 * rowbin.h - rows in ClickHouse's RowBinary format, the body of an
 * `INSERT INTO t FORMAT RowBinary`: each row is its columns in order,
 * integers and floats as little-endian bytes of their width, a String as
 * its length in unsigned LEB128 then its bytes. Strings travel as counted
 * bytes, never as SQL or as text to be escaped: a symbol name holding
 * quotes, tabs, newlines or NULs is stored as it is.
 *
 *   struct ana_rowbin b;
 *   ana_rowbin_init(&b);
 *   per row: ana_rowbin_i64(&b, v); ana_rowbin_str(&b, s, n); ...
 *   if (ana_rowbin_error(&b)) ...     // -ENOMEM: some append failed
 *   send b.buf, b.len; ana_rowbin_reset(&b) to reuse the memory
 *   ana_rowbin_release(&b);
 *
 * An append that cannot grow the buffer leaves it as it was and makes the
 * error sticky, so a row is encoded with no check per column.
 */
#ifndef ANA_LOAD_ROWBIN_H
#define ANA_LOAD_ROWBIN_H

#include <stddef.h>
#include <stdint.h>

struct ana_rowbin {
	unsigned char *buf;   /* owned; len bytes of rows */
	size_t len, cap;
	int err;              /* 0, or -ENOMEM since the last reset */
};

void ana_rowbin_init(struct ana_rowbin *b);
void ana_rowbin_release(struct ana_rowbin *b);
/* Empties the buffer (keeps its memory) and clears the error. */
void ana_rowbin_reset(struct ana_rowbin *b);
int ana_rowbin_error(const struct ana_rowbin *b);

void ana_rowbin_u8(struct ana_rowbin *b, uint8_t v);
void ana_rowbin_i64(struct ana_rowbin *b, int64_t v);     /* Int64 */
void ana_rowbin_f64(struct ana_rowbin *b, double v);      /* Float64 */
void ana_rowbin_str(struct ana_rowbin *b, const void *s, size_t n);   /* String */

#endif
