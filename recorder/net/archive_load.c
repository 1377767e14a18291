/*
 * archive_load.c - completed archive files into ClickHouse through
 * `perfrec-analyze load` subprocesses; see archive_load.h.
 *
 * One list of jobs, in the order the files completed. A job is waiting
 * (pid 0, startable from not_before on) or running (pid > 0). poll()
 * reaps with waitpid(WNOHANG) only the pids it started, so it never
 * blocks the archiver's fetch loop and never takes another child's
 * status.
 */
#include "recorder/net/archive_load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "recorder/log.h"

extern char **environ;

/* Waits before the 2nd, 3rd and 4th try of a failed load: a ClickHouse
 * restart or a full disk is over within minutes, or needs an operator
 * (then the file waits for a manual load, which is idempotent). */
static const uint32_t retry_ms[] = { 10000, 60000, 300000 };
#define MAX_TRIES (1 + (int)(sizeof(retry_ms) / sizeof(retry_ms[0])))

struct job {
	char *path;
	pid_t pid;              /* running; 0 = waiting */
	int tries;              /* loads started so far */
	uint64_t not_before;    /* prec_now_ms() */
	struct job *next;
};

struct rec_archive_loader {
	struct rec_archive_loader_opts o;
	char exe[PATH_MAX + 32];   /* a path, or a bare name looked up in PATH */
	char *env_urls;            /* "PERFREC_CLICKHOUSE=URLS", without urls_file */
	char *manual;              /* the load's options as logged for a manual
				    * load: the URLs with no user, password or
				    * parameters (the analyzer never prints them),
				    * or --clickhouse-file FILE */
	int running;
	bool stopping;             /* free(): no more tries */
	struct job *jobs, **tail;
	struct rec_archive_loader_stats st;
};

/* urls without what a log must not show: the user info of each URL
 * (scheme://USER:PASSWORD@host) and its parameters (?user=...&password=...).
 * NULL when out of memory. */
static char *shown_urls(const char *urls)
{
	char *out = malloc(strlen(urls) + 1), *w = out;

	if (!out)
		return NULL;
	while (*urls) {
		size_t n = strcspn(urls, ",");
		const char *host = urls, *end = urls + n, *sep = strstr(urls, "://");

		if (sep && sep < end) {
			const char *at = sep + 3, *slash = sep + 3 + strcspn(sep + 3, "/?,");

			memcpy(w, urls, (size_t)(at - urls));
			w += at - urls;
			for (const char *c = at; c < slash; c++)
				if (*c == '@')
					at = c + 1;
			host = at;
		}
		for (const char *c = host; c < end && *c != '?'; c++)
			*w++ = *c;
		if (*end == ',')
			*w++ = *end++;
		urls = end;
	}
	*w = '\0';
	return out;
}

/* The file of URLs is read by each load; checked here so that a file the
 * loads would refuse stops the archiver at its start, not every file's
 * load later. */
static int check_urls_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		e = errno;
		rec_log(REC_LOG_ERROR, "archive: cannot read the --clickhouse-file %s: %s", path,
			strerror(e));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	close(fd);
	if (st.st_mode & 077) {
		rec_log(REC_LOG_ERROR, "archive: --clickhouse-file %s is open to others than its "
			"owner (mode %03o) and may hold passwords: chmod 600 %s", path,
			(unsigned)(st.st_mode & 0777), path);
		return -EINVAL;
	}
	return 0;
}

int rec_archive_loader_new(const struct rec_archive_loader_opts *o,
			   struct rec_archive_loader **out)
{
	struct rec_archive_loader *l = calloc(1, sizeof(*l));
	char *shown = NULL;
	int ret = -EINVAL;
	size_t n;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	if (prec_opts_copy(&l->o, sizeof(l->o), o) < 0 || !l->o.analyzer ||
	    !(l->o.urls && *l->o.urls) == !(l->o.urls_file && *l->o.urls_file))
		goto err;
	if (l->o.jobs <= 0)
		l->o.jobs = 2;
	if (!l->o.stop_wait_ms)
		l->o.stop_wait_ms = 60000;
	snprintf(l->exe, sizeof(l->exe), "%s", l->o.analyzer);
	if (strchr(l->exe, '/') && access(l->exe, X_OK) < 0) {
		int e = errno;

		rec_log(REC_LOG_ERROR, "archive: cannot run the loader %s: %s; give "
			"--analyzer the path of perfrec-analyze", l->exe, strerror(e));
		goto err;
	}
	if (l->o.urls_file && (ret = check_urls_file(l->o.urls_file)) < 0)
		goto err;
	ret = -ENOMEM;
	if (l->o.urls_file) {
		n = strlen(l->o.urls_file) + sizeof("--clickhouse-file ");
		if (!(l->manual = malloc(n)))
			goto err;
		snprintf(l->manual, n, "--clickhouse-file %s", l->o.urls_file);
	} else {
		n = strlen(l->o.urls) + sizeof(REC_ARCHIVE_LOAD_URLS_ENV "=");
		if (!(shown = shown_urls(l->o.urls)) || !(l->env_urls = malloc(n)) ||
		    !(l->manual = malloc(strlen(shown) + sizeof("--clickhouse "))))
			goto err;
		snprintf(l->env_urls, n, REC_ARCHIVE_LOAD_URLS_ENV "=%s", l->o.urls);
		sprintf(l->manual, "--clickhouse %s", shown);
		free(shown);
	}
	l->tail = &l->jobs;
	*out = l;
	return 0;
err:
	free(shown);
	free(l->env_urls);
	free(l->manual);
	free(l);
	return ret;
}

int rec_archive_loader_add(struct rec_archive_loader *l, const char *path)
{
	struct job *j = calloc(1, sizeof(*j));

	l->st.queued++;
	if (j)
		j->path = strdup(path);
	if (!j || !j->path) {
		free(j);
		rec_log(REC_LOG_ERROR, "archive: %s not queued for loading: out of memory; "
			"load it with perfrec-analyze load %s %s", path, l->manual, path);
		l->st.abandoned++;
		return -ENOMEM;
	}
	*l->tail = j;
	l->tail = &j->next;
	return 0;
}

static void unlink_job(struct rec_archive_loader *l, struct job *j)
{
	struct job **pp = &l->jobs;

	while (*pp != j)
		pp = &(*pp)->next;
	*pp = j->next;
	if (l->tail == &j->next)
		l->tail = pp;
	free(j->path);
	free(j);
}

/* The load's environment: the archiver's, with PERFREC_CLICKHOUSE set to
 * the URLs (or unset with --clickhouse-file, which the load prefers
 * anyway). The strings are borrowed; free() the array. NULL: ENOMEM. */
static char **load_env(const struct rec_archive_loader *l)
{
	const size_t len = sizeof(REC_ARCHIVE_LOAD_URLS_ENV "=") - 1;
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	if (!(env = malloc((n + 2) * sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], REC_ARCHIVE_LOAD_URLS_ENV "=", len))
			env[k++] = environ[i];
	if (l->env_urls)
		env[k++] = l->env_urls;
	env[k] = NULL;
	return env;
}

/* Starts j: 0, or the spawn's errno (j is then treated as a failed try). */
static int start(struct rec_archive_loader *l, struct job *j)
{
	char *argv[] = { l->exe, "load", j->path, NULL, NULL, NULL };
	char **env = load_env(l);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dflt;
	pid_t pid;
	int ret;

	if (!env)
		return ENOMEM;
	if (l->o.urls_file) {
		argv[2] = "--clickhouse-file";
		argv[3] = (char *)l->o.urls_file;
		argv[4] = j->path;
	}

	/* The load has the default signals (the archiver's SIGTERM handler
	 * and libnats's ignored SIGPIPE are not its own), a process group of
	 * its own (a Ctrl-C meant for the archiver does not cut a load: the
	 * archiver waits for it when it stops), and none of the archiver's
	 * descriptors (sockets, archive files and their locks). */
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGTERM);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGCHLD);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETPGROUP);
	ret = strchr(l->exe, '/') ? posix_spawn(&pid, l->exe, &fa, &at, argv, env)
				  : posix_spawnp(&pid, l->exe, &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(env);
	j->tries++;
	if (ret)
		return ret;
	j->pid = pid;
	l->running++;
	rec_log(REC_LOG_INFO, "archive: loading %s (pid %d, try %d of %d)", j->path, (int)pid,
		j->tries, MAX_TRIES);
	return 0;
}

/* A try of j ended with what (a wait status, or a spawn errno when
 * spawn_err): done, queued again, or given up. */
static void ended(struct rec_archive_loader *l, struct job *j, int status, int spawn_err)
{
	char why[sizeof(l->exe) + 96];

	if (!spawn_err && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rec_log(REC_LOG_INFO, "archive: %s loaded", j->path);
		l->st.loaded++;
		unlink_job(l, j);
		return;
	}
	if (spawn_err)
		snprintf(why, sizeof(why), "cannot run %s: %s", l->exe, strerror(spawn_err));
	else if (WIFEXITED(status))
		snprintf(why, sizeof(why), "the load exited with status %d", WEXITSTATUS(status));
	else
		snprintf(why, sizeof(why), "the load was killed by signal %d",
			 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	l->st.failed++;
	if (j->tries < MAX_TRIES && !l->stopping) {
		uint32_t wait = retry_ms[j->tries - 1];

		rec_log(REC_LOG_WARN, "archive: loading %s: %s; trying again in %u s",
			j->path, why, wait / 1000);
		l->st.retried++;
		j->not_before = prec_now_ms() + wait;
		return;
	}
	rec_log(REC_LOG_ERROR, "archive: loading %s: %s (try %d of %d); left for a manual "
		"perfrec-analyze load %s %s", j->path, why, j->tries, MAX_TRIES,
		l->manual, j->path);
	l->st.abandoned++;
	unlink_job(l, j);
}

static void reap(struct rec_archive_loader *l, bool block)
{
	struct job *j = l->jobs, *next;

	for (; j; j = next) {
		int status;
		pid_t r;

		next = j->next;
		if (j->pid <= 0)
			continue;
		do {
			r = waitpid(j->pid, &status, block ? 0 : WNOHANG);
		} while (r < 0 && errno == EINTR);
		if (r == 0)
			continue;
		j->pid = 0;
		l->running--;
		if (r < 0)
			status = 0x7f00;   /* not ours to reap any more: counted a failure */
		ended(l, j, status, 0);
	}
}

void rec_archive_loader_poll(struct rec_archive_loader *l)
{
	uint64_t now;

	reap(l, false);
	now = prec_now_ms();
	for (struct job *j = l->jobs, *next; j && l->running < l->o.jobs; j = next) {
		int err;

		next = j->next;
		if (j->pid || j->not_before > now)
			continue;
		err = start(l, j);
		if (err)
			ended(l, j, 0, err);
	}
}

void rec_archive_loader_stats(const struct rec_archive_loader *l,
			      struct rec_archive_loader_stats *st)
{
	*st = l->st;
}

void rec_archive_loader_free(struct rec_archive_loader *l)
{
	uint64_t deadline;

	if (!l)
		return;
	l->stopping = true;
	deadline = prec_now_ms() + l->o.stop_wait_ms;
	while (l->running && prec_now_ms() < deadline) {
		struct timespec t = { 0, 100 * 1000000L };

		reap(l, false);
		if (l->running)
			nanosleep(&t, NULL);
	}
	if (l->running) {
		for (struct job *j = l->jobs; j; j = j->next)
			if (j->pid > 0) {
				rec_log(REC_LOG_WARN, "archive: stopping the load of %s (pid %d): "
					"still running after %u s", j->path, (int)j->pid,
					l->o.stop_wait_ms / 1000);
				kill(j->pid, SIGTERM);
			}
		reap(l, true);
	}
	while (l->jobs) {
		rec_log(REC_LOG_WARN, "archive: %s not loaded (the archiver stopped first); "
			"load it with perfrec-analyze load %s %s", l->jobs->path,
			l->manual, l->jobs->path);
		l->st.abandoned++;
		unlink_job(l, l->jobs);
	}
	free(l->env_urls);
	free(l->manual);
	free(l);
}
