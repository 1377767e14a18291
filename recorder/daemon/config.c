/*
 * config.c - daemon.conf and session files; see config.h.
 */
#include "recorder/daemon/config.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/log.h"
#include "recorder/net/wire.h"

#define MAX_FILE (64u << 10)
#define MAX_WORDS 1024

int rec_file_read_fd(int fd, size_t max, char **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *b;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	b = malloc((size_t)st.st_size + 1);
	if (!b)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, b + got, (size_t)st.st_size - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = -errno;

			free(b);
			return e;
		}
		if (k == 0)
			break;   /* shrank under us: what was there */
		got += (size_t)k;
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

/* The whole file (NUL-ended) into *text; -ENOENT quietly. */
static int slurp(const char *path, char **text)
{
	char *b;
	size_t got = 0;
	int fd, e;

	*text = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		if (e != -ENOENT)
			rec_log(REC_LOG_ERROR, "cannot read %s: %s", path, strerror(-e));
		return e;
	}
	e = rec_file_read_fd(fd, MAX_FILE, &b, &got);
	close(fd);
	if (e == -EINVAL || e == -EFBIG) {
		rec_log(REC_LOG_ERROR, "%s: not a regular file of at most %u bytes", path,
			MAX_FILE);
		return -EINVAL;
	}
	if (e < 0) {
		if (e != -ENOMEM)
			rec_log(REC_LOG_ERROR, "cannot read %s: %s", path, strerror(-e));
		return e;
	}
	if (strlen(b) != got) {
		rec_log(REC_LOG_ERROR, "%s: holds a NUL byte", path);
		free(b);
		return -EINVAL;
	}
	*text = b;
	return 0;
}

void rec_words_free(char **argv)
{
	if (!argv)
		return;
	for (char **p = argv; *p; p++)
		free(*p);
	free(argv);
}

static int line_of(const char *text, const char *p)
{
	int line = 1;

	for (; text < p; text++)
		line += *text == '\n';
	return line;
}

int rec_words_split(const char *text, const char *where, char ***out, int *outc)
{
	char **argv = calloc(MAX_WORDS + 1, sizeof(*argv));
	char *word = malloc(strlen(text) + 1);
	const char *p = text;
	int argc = 0, ret = 0;

	*out = NULL;
	*outc = 0;
	if (!argv || !word) {
		ret = -ENOMEM;
		goto err;
	}
	for (;;) {
		size_t n = 0;
		bool any = false;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			break;
		if (*p == '#') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
			const char *open = p;

			any = true;
			if (*p == '\'') {
				for (p++; *p && *p != '\''; p++)
					word[n++] = *p;
			} else if (*p == '"') {
				for (p++; *p && *p != '"'; p++) {
					if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
						p++;
					word[n++] = *p;
				}
			} else {
				if (*p == '\\' && p[1])
					p++;
				word[n++] = *p++;
				continue;
			}
			if (!*p) {
				rec_log(REC_LOG_ERROR, "%s:%d: unterminated quote", where,
					line_of(text, open));
				ret = -EINVAL;
				goto err;
			}
			p++;   /* the closing quote */
		}
		if (!any)
			continue;
		if (argc == MAX_WORDS) {
			rec_log(REC_LOG_ERROR, "%s: more than %d words", where, MAX_WORDS);
			ret = -EINVAL;
			goto err;
		}
		word[n] = '\0';
		argv[argc] = strdup(word);
		if (!argv[argc]) {
			ret = -ENOMEM;
			goto err;
		}
		argc++;
	}
	free(word);
	*out = argv;
	*outc = argc;
	return 0;
err:
	free(word);
	rec_words_free(argv);
	return ret;
}

int rec_session_file_read(const char *path, char ***argv, int *argc)
{
	char *text;
	int ret = slurp(path, &text);

	if (ret < 0)
		return ret;
	ret = rec_words_split(text, path, argv, argc);
	free(text);
	return ret;
}

bool rec_session_file_name(const char *file, char name[65])
{
	size_t n = strlen(file), s = strlen(REC_SESSION_SUFFIX);

	if (n <= s || n - s > 64 || strcmp(file + n - s, REC_SESSION_SUFFIX))
		return false;
	memcpy(name, file, n - s);
	name[n - s] = '\0';
	return rec_wire_name_ok(name);
}

int rec_daemon_conf_read(const char *dir, struct rec_daemon_conf *c)
{
	char path[4096], *text, *line, *next;
	int ret, lineno = 0;

	memset(c, 0, sizeof(*c));
	if (!dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, REC_DAEMON_CONF);
	ret = slurp(path, &text);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	for (line = text; line && ret >= 0; line = next) {
		char key[64], val[128], extra[2];
		int n;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "#")] = '\0';
		n = sscanf(line, "%63s %127s %1s", key, val, extra);
		if (n <= 0)
			continue;
		if (n == 2 && !strcmp(key, "group") && strlen(val) < sizeof(c->group)) {
			memcpy(c->group, val, strlen(val) + 1);
			continue;
		}
		rec_log(REC_LOG_ERROR, "%s: line %d: not a setting ('group NAME' is the "
			"one known): %s", path, lineno, line);
		ret = -EINVAL;
	}
	free(text);
	return ret;
}
