/*
 * synth.c - TaskEvent EXISTING and synthesized Mmap from /proc; see synth.h.
 */
#include "recorder/encode/synth.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct proc_info {
	int pid, ppid;
	char comm[64];
};

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_status(const char *root, int pid, struct proc_info *pi)
{
	char path[256], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	pi->pid = pid;
	pi->ppid = 0;
	pi->comm[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			size_t n = strcspn(line + 6, "\n");

			if (n >= sizeof(pi->comm))
				n = sizeof(pi->comm) - 1;
			memcpy(pi->comm, line + 6, n);
			pi->comm[n] = '\0';
		} else if (!strncmp(line, "PPid:", 5)) {
			pi->ppid = atoi(line + 5);
		}
	}
	fclose(f);
	return 0;
}

static int emit_task(struct prec_writer *w, uint32_t stream, int pid, int tid,
		     int ppid, const char *comm, uint64_t t)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;

	te.kind = PERFREC__TASK_EVENT__KIND__EXISTING;
	te.pid = (uint32_t)pid;
	te.tid = (uint32_t)tid;
	te.ppid = (uint32_t)ppid;
	te.comm = prec_writer_intern_string(w, stream, comm);
	if (!te.comm)
		return prec_writer_error(w);
	p.data_case = PERFREC__PACKET__DATA_TASK;
	p.task = &te;
	return prec_writer_append(w, stream, &p, t);
}

static int synth_threads(struct prec_writer *w, uint32_t stream,
			 const char *root, const struct proc_info *pi,
			 uint64_t t, struct rec_synth_stats *st)
{
	char path[256], comm[64];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%d/task", root, pi->pid);
	d = opendir(path);
	if (!d) /* gone, or no task dir: describe the process alone */
		return emit_task(w, stream, pi->pid, pi->pid, pi->ppid, pi->comm, t);
	while ((de = readdir(d)) && !ret) {
		int tid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		tid = atoi(de->d_name);
		snprintf(path, sizeof(path), "%s/%d/task/%d/comm", root, pi->pid, tid);
		if (read_line(path, comm, sizeof(comm)) < 0)
			snprintf(comm, sizeof(comm), "%s", pi->comm);
		ret = emit_task(w, stream, pi->pid, tid, pi->ppid, comm, t);
		st->threads++;
	}
	closedir(d);
	return ret;
}

static int synth_maps(struct prec_writer *w, uint32_t stream, const char *root,
		      int pid, uint64_t t, struct rec_synth_stats *st)
{
	char path[256], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!ret && getline(&line, &cap, f) > 0) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__Mmap m = PERFREC__MMAP__INIT;
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int name_at = 0;
		const char *name;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end,
			   perms, &off, &maj, &min, &ino, &name_at) < 7)
			continue;
		if (strlen(perms) < 4 || perms[2] != 'x' || end <= start)
			continue;
		line[strcspn(line, "\n")] = '\0';
		name = name_at > 0 && line[name_at] ? line + name_at : "//anon";
		m.pid = (uint32_t)pid;
		m.tid = (uint32_t)pid;
		m.start = start;
		m.len = end - start;
		m.pgoff = off;
		m.maj = maj;
		m.min = min;
		m.ino = ino;
		m.prot = (perms[0] == 'r' ? PROT_READ : 0) |
			 (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		m.synthesized = 1;
		m.misc = PERF_RECORD_MISC_USER;
		m.filename = prec_writer_intern_string(w, stream, name);
		if (!m.filename) {
			ret = prec_writer_error(w);
			break;
		}
		p.data_case = PERFREC__PACKET__DATA_MMAP;
		p.mmap = &m;
		ret = prec_writer_append(w, stream, &p, t);
		st->mmaps++;
	}
	free(line);
	fclose(f);
	return ret;
}

static int synth_pid(struct prec_writer *w, uint32_t stream, const char *root,
		     int pid, uint64_t t, struct rec_synth_stats *st)
{
	struct proc_info pi;
	int ret;

	if (read_status(root, pid, &pi) < 0)
		return 0;   /* exited meanwhile */
	st->processes++;
	ret = synth_threads(w, stream, root, &pi, t, st);
	if (!ret)
		ret = synth_maps(w, stream, root, pid, t, st);
	return ret;
}

int rec_synth_tasks(struct prec_writer *w, uint32_t stream,
		    const char *proc_root, const int *pids, size_t npids,
		    uint64_t time_ns, struct rec_synth_stats *st)
{
	struct rec_synth_stats dummy;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (npids) {
		for (size_t i = 0; i < npids && !ret; i++)
			ret = synth_pid(w, stream, proc_root, pids[i], time_ns, st);
		return ret;
	}
	d = opendir(proc_root);
	if (!d)
		return 0;
	while ((de = readdir(d)) && !ret) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		ret = synth_pid(w, stream, proc_root, atoi(de->d_name), time_ns, st);
	}
	closedir(d);
	return ret;
}
