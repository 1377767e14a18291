/*
 * config.h - the daemon's configuration directory (`perfrec daemon
 * --config DIR`, /etc/perfrec by default):
 *
 *   DIR/daemon.conf     the daemon's settings, one "key value" a line:
 *                         group NAME   the control socket becomes 0660
 *                                      with this group, and its members
 *                                      may use `perfrec ctl` (else 0600,
 *                                      root only)
 *   DIR/NAME.session    one session each, started with the daemon,
 *                       restarted when it fails, reloaded when the file
 *                       changes: the words of `perfrec ctl start NAME
 *                       ...` (record options and session options), over
 *                       as many lines as wanted
 *
 * Both: '#' starts a comment (at the start of a word), words are split at
 * white space, '...' and "..." quote (backslash escapes in "..." and
 * outside quotes). Files are at most 64 KiB. A missing daemon.conf means
 * the defaults; an unknown key is an error (a mistyped security setting
 * must not pass silently).
 *
 * Errors are logged with the file and line, returned as -errno (-EINVAL
 * for bad contents).
 */
#ifndef REC_CONFIG_H
#define REC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define REC_DAEMON_CONF "daemon.conf"
#define REC_SESSION_SUFFIX ".session"

struct rec_daemon_conf {
	char group[64];          /* "" = none */
};

int rec_daemon_conf_read(const char *dir, struct rec_daemon_conf *c);

/* The whole of the regular file open at fd, at most max bytes, into a
 * malloc'ed *buf (one NUL byte added after its *len bytes; the caller
 * frees it). Does not close fd. -EFBIG over max, -EINVAL not a regular
 * file, -ENOMEM, or -errno of the read. Logs nothing: callers know what
 * the file is. */
int rec_file_read_fd(int fd, size_t max, char **buf, size_t *len);

/* The words of text into *argv (NULL-ended; free with rec_words_free()),
 * *argc of them. where names the text in messages ("web.session"). */
int rec_words_split(const char *text, const char *where, char ***argv, int *argc);
void rec_words_free(char **argv);   /* NULL is fine */

/* A session file's words. */
int rec_session_file_read(const char *path, char ***argv, int *argc);

/* The session name of a file name "NAME.session", into name (65 bytes):
 * true when it is one (and NAME is a valid session name). */
bool rec_session_file_name(const char *file, char name[65]);

#endif
