/*
 * pbwrite.h - a protobuf field writer for formats the tool does not link.
 *
 * The Perfetto and OTLP exports write messages of protos that are not
 * compiled into the analyzer (Perfetto's trace proto alone is 680 KB of
 * which a dozen fields are used): each field is written by number, as the
 * proto file fetched into tests/data/ says, and the tests decode the output
 * with protoc against that file.
 *
 * How to use:
 *
 *   struct ana_pbw w;
 *   ana_pbw_init(&w);
 *   ana_pbw_begin(&w, 1);            // a length-delimited message field
 *   ana_pbw_varint(&w, 8, time);     // fields of the nested message
 *   ana_pbw_str(&w, 23, name);
 *   ana_pbw_end(&w);                 // closes the innermost begin
 *   ret = ana_pbw_flush(&w, out);    // writes what is closed, empties w
 *   ana_pbw_release(&w);
 *
 * A nested message is written in place and its length inserted in front
 * when it closes (one memmove of its bytes), so memory is the largest
 * top-level message between two flushes, not the output. Errors are
 * sticky: a failed allocation makes the writer drop everything after it
 * and ana_pbw_flush() return -ENOMEM; an unbalanced end() is -EINVAL.
 */
#ifndef ANA_PBWRITE_H
#define ANA_PBWRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ANA_PBW_DEPTH 16   /* nesting of the deepest message written */

struct ana_pbw {
	uint8_t *p;
	size_t len, cap;
	size_t open[ANA_PBW_DEPTH];   /* start of each open message's body */
	int depth;
	int err;
};

void ana_pbw_init(struct ana_pbw *w);
void ana_pbw_release(struct ana_pbw *w);

/* Wire type 0: uint32/64, bool, enums; int32/int64 as their two's
 * complement (negative values take ten bytes, as protobuf writes them). */
void ana_pbw_varint(struct ana_pbw *w, uint32_t field, uint64_t v);
/* Wire type 1. */
void ana_pbw_fixed64(struct ana_pbw *w, uint32_t field, uint64_t v);
void ana_pbw_double(struct ana_pbw *w, uint32_t field, double v);
/* Wire type 2: bytes; strings (s may be NULL: an empty string). A
 * string field must hold UTF-8 (protoc and proto3 parsers refuse anything
 * else) and trace strings are untrusted bytes: each byte that does not
 * start a valid UTF-8 character is written as U+FFFD, as the JSON writer
 * does; valid text is copied as it is. */
void ana_pbw_bytes(struct ana_pbw *w, uint32_t field, const void *p, size_t n);
void ana_pbw_str(struct ana_pbw *w, uint32_t field, const char *s);
/* A nested message or a packed repeated field: begin, its contents
 * (fields, or ana_pbw_raw_varint() for packed numbers), end. */
void ana_pbw_begin(struct ana_pbw *w, uint32_t field);
void ana_pbw_end(struct ana_pbw *w);
void ana_pbw_raw_varint(struct ana_pbw *w, uint64_t v);
/* Appends bytes as they are (a message written elsewhere). */
void ana_pbw_raw(struct ana_pbw *w, const void *p, size_t n);
/* The tag and length of a length-delimited field whose n bytes the
 * caller writes next, possibly elsewhere (a message too large to hold,
 * copied from a file after this prefix is flushed). */
void ana_pbw_len_prefix(struct ana_pbw *w, uint32_t field, uint64_t n);
/* Bytes a field's tag and length prefix take (to size an enclosing
 * message written that way). */
size_t ana_pbw_prefix_size(uint32_t field, uint64_t n);

/* Writes the bytes written so far to out and empties the writer. Only
 * with no message open (-EINVAL otherwise). 0, -ENOMEM (an earlier
 * allocation failed) or -EIO. */
int ana_pbw_flush(struct ana_pbw *w, FILE *out);

#endif
