/*
 * chreply.h - what a ClickHouse server answers over HTTP, read as the
 * untrusted bytes they are (a proxy, a wrong port or a garbled reply can
 * put anything there): its error text and the integer columns the loader
 * asks for. No libcurl here, so the parsers are tested and fuzzed alone.
 */
#ifndef ANA_LOAD_CHREPLY_H
#define ANA_LOAD_CHREPLY_H

#include <stddef.h>
#include <stdint.h>

/*
 * The message of an error reply into msg (msgsz > 0, always terminated):
 * ClickHouse 18's "Code: 62, e.displayText() = DB::Exception: MSG,
 * e.what() = DB::Exception" and newer servers' "Code: 62. DB::Exception:
 * MSG. (NAME) (version X)" both give MSG; any other body (a proxy's page)
 * is kept as it is. Control characters become spaces, the text is cut at
 * msgsz - 1 bytes. *code (may be NULL) is the server's error code, or -1
 * when the body names none. Returns the length of msg.
 */
size_t ana_chreply_error(const char *body, size_t len, char *msg, size_t msgsz, int *code);

/*
 * A reply in TabSeparated format whose rows are each one signed 64-bit
 * decimal integer (`SELECT count() ...`, `SELECT stack_id ...`): the
 * values into *vals (malloc'd, the caller frees; NULL when none) and
 * their number into *n. 0, or -EBADMSG when a row is anything else (not
 * a number, out of range, a second column), -ENOMEM.
 */
int ana_chreply_ints(const char *body, size_t len, int64_t **vals, size_t *n);

#endif
