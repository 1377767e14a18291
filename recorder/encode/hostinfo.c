/*
 * hostinfo.c - FileHeader contents; see hostinfo.h.
 */
#include "recorder/encode/hostinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/events/cpumap.h"

int rec_read_int_file(const char *path, int def)
{
	FILE *f = fopen(path, "re");
	int v;

	if (!f)
		return def;
	if (fscanf(f, "%d", &v) != 1)
		v = def;
	fclose(f);
	return v;
}

static void read_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!strncmp(line, "model name", 10) || !strncmp(line, "Processor", 9) ||
		    !strncmp(line, "cpu model", 9)) {
			colon++;
			while (*colon == ' ')
				colon++;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

static uint64_t mem_total(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static int numa_node(int cpu)
{
	char path[128];

	for (int n = 0; n < 1024; n++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/node%d", cpu, n);
		if (access(path, F_OK) == 0)
			return n;
		if (n > 64 && access("/sys/devices/system/node/node0", F_OK) != 0)
			break;
	}
	return -1;
}

static void fill_cpus(struct rec_hostinfo *h)
{
	struct rec_cpumap m = REC_CPUMAP_INIT;
	char path[128];

	if (rec_cpumap_online(&m) < 0)
		return;
	h->cpus = calloc(m.n, sizeof(*h->cpus));
	h->cpu_ptrs = calloc(m.n, sizeof(*h->cpu_ptrs));
	if (!h->cpus || !h->cpu_ptrs) {
		free(h->cpus);
		free(h->cpu_ptrs);
		h->cpus = NULL;
		h->cpu_ptrs = NULL;
		rec_cpumap_release(&m);
		return;
	}
	for (size_t i = 0; i < m.n; i++) {
		Perfrec__CpuInfo *c = &h->cpus[i];
		int cpu = m.cpu[i];

		perfrec__cpu_info__init(c);
		c->cpu = (uint32_t)cpu;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
		c->core_id = rec_read_int_file(path, -1);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
		c->package_id = rec_read_int_file(path, -1);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/die_id", cpu);
		c->die_id = rec_read_int_file(path, -1);
		c->numa_node = numa_node(cpu);
		h->cpu_ptrs[i] = c;
	}
	h->hdr.n_cpus = m.n;
	h->hdr.cpus = h->cpu_ptrs;
	rec_cpumap_release(&m);
}

int rec_hostinfo_init(struct rec_hostinfo *h, const char *version)
{
	struct timespec rt, m0, m1;

	memset(h, 0, sizeof(*h));
	perfrec__file_header__init(&h->hdr);
	snprintf(h->version, sizeof(h->version), "%s", version ? version : "");
	h->hdr.recorder_version = h->version;
	if (uname(&h->uts) == 0) {
		h->hdr.kernel_release = h->uts.release;
		h->hdr.kernel_version = h->uts.version;
		h->hdr.machine = h->uts.machine;
	}
	if (gethostname(h->hostname, sizeof(h->hostname) - 1) == 0)
		h->hdr.hostname = h->hostname;
	read_cpu_model(h->cpu_model, sizeof(h->cpu_model));
	h->hdr.cpu_model = h->cpu_model;
	h->hdr.cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	h->hdr.cpus_configured = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	h->hdr.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	h->hdr.mem_total = mem_total();
	h->hdr.perf_event_paranoid =
		rec_read_int_file("/proc/sys/kernel/perf_event_paranoid", 2);
	h->hdr.kptr_restrict = rec_read_int_file("/proc/sys/kernel/kptr_restrict", 0);
	/* Clock reference: realtime read between two monotonic reads; the
	 * midpoint of those is the monotonic time of the realtime read. */
	clock_gettime(CLOCK_MONOTONIC, &m0);
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &m1);
	h->hdr.realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	{
		uint64_t a = (uint64_t)m0.tv_sec * 1000000000ull + (uint64_t)m0.tv_nsec;
		uint64_t b = (uint64_t)m1.tv_sec * 1000000000ull + (uint64_t)m1.tv_nsec;

		h->hdr.monotonic_ns = a + (b - a) / 2;
	}
	fill_cpus(h);
	return 0;
}

void rec_hostinfo_release(struct rec_hostinfo *h)
{
	if (!h)
		return;
	free(h->cpus);
	free(h->cpu_ptrs);
	h->cpus = NULL;
	h->cpu_ptrs = NULL;
}
