/*
 * threadmap.c - pid/tid lists and thread expansion; see threadmap.h.
 */
#include "recorder/events/threadmap.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/base/hashmap.h"
#include "recorder/events/cpumap.h"
#include "recorder/log.h"

int rec_threadmap_parse(struct rec_threadmap *m, const char *s)
{
	int ret = rec_idlist_parse(s, REC_PID_MAX, &m->tid, &m->n);

	if (!ret && m->n && m->tid[0] == 0) {
		rec_threadmap_release(m);
		return -EINVAL;
	}
	return ret;
}

static int push(struct rec_threadmap *m, size_t *cap, int tid)
{
	if (m->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		int *n = realloc(m->tid, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		m->tid = n;
		*cap = nc;
	}
	m->tid[m->n++] = tid;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Every thread of process pid, or pid itself when its task list is not
 * readable. */
static int add_threads(struct rec_threadmap *m, size_t *cap, int pid,
		       const char *proc_root)
{
	char path[4200];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%d/task", proc_root, pid);
	d = opendir(path);
	if (!d)
		return push(m, cap, pid);
	while (!ret && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			ret = push(m, cap, atoi(de->d_name));
	closedir(d);
	return ret;
}

int rec_threadmap_expand(struct rec_threadmap *out, const int *ids, size_t n,
			 bool processes, const char *proc_root)
{
	size_t cap = 0;
	int ret = 0;

	out->tid = NULL;
	out->n = 0;
	if (!proc_root)
		proc_root = "/proc";
	for (size_t i = 0; i < n && !ret; i++) {
		if (kill(ids[i], 0) < 0 && errno == ESRCH) {
			rec_log(REC_LOG_ERROR, "no such %s: %d",
				processes ? "process" : "thread", ids[i]);
			ret = -ESRCH;
		} else if (processes) {
			ret = add_threads(out, &cap, ids[i], proc_root);
		} else {
			ret = push(out, &cap, ids[i]);
		}
	}
	if (ret < 0) {
		if (ret == -ENOMEM)
			rec_log(REC_LOG_ERROR, "out of memory listing threads");
		rec_threadmap_release(out);
		return ret;
	}
	/* no thread at all leaves tid NULL (qsort's base must not be) */
	prec_sort(out->tid, out->n, sizeof(*out->tid), cmp_int);
	{
		size_t u = 0;

		for (size_t i = 0; i < out->n; i++)
			if (!u || out->tid[u - 1] != out->tid[i])
				out->tid[u++] = out->tid[i];
		out->n = u;
	}
	return 0;
}

bool rec_threadmap_alive(const struct rec_threadmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (kill(m->tid[i], 0) == 0 || errno != ESRCH)
			return true;
	return false;
}

void rec_threadmap_release(struct rec_threadmap *m)
{
	if (!m)
		return;
	free(m->tid);
	m->tid = NULL;
	m->n = 0;
}
