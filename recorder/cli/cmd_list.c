/*
 * cmd_list.c - `perfrec list`: the events this host supports.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/cli/cmd.h"
#include "recorder/events/evnames.h"
#include "recorder/events/groupopen.h"
#include "recorder/events/tracefs.h"

static bool host_has_hw_pmu(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return rec_groupopen_probe(&a);
}

static bool match(const char *filter, const char *s)
{
	return !filter || strstr(s, filter);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_tracepoints(const char *filter)
{
	char tfs[256], err[512], path[512];
	char **names = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	struct dirent *sys;

	if (rec_tracefs_path(tfs, sizeof(tfs), err, sizeof(err)) < 0) {
		printf("\nTracepoints: unavailable: %s\n", err);
		return;
	}
	snprintf(path, sizeof(path), "%s/events", tfs);
	d = opendir(path);
	if (!d) {
		printf("\nTracepoints: cannot read %s: %s\n", path, strerror(errno));
		return;
	}
	while ((sys = readdir(d))) {
		DIR *sd;
		struct dirent *ev;
		char sp[768];

		if (sys->d_name[0] == '.' || sys->d_type == DT_REG)
			continue;
		snprintf(sp, sizeof(sp), "%s/%s", path, sys->d_name);
		sd = opendir(sp);
		if (!sd)
			continue;
		while ((ev = readdir(sd))) {
			char name[600];

			if (ev->d_name[0] == '.' || ev->d_type == DT_REG)
				continue;
			snprintf(name, sizeof(name), "%s:%s", sys->d_name, ev->d_name);
			if (!match(filter, name))
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 256;
				char **nn = realloc(names, nc * sizeof(*nn));

				if (!nn)
					break;
				names = nn;
				cap = nc;
			}
			names[n] = strdup(name);
			if (names[n])
				n++;
		}
		closedir(sd);
	}
	closedir(d);
	if (n)   /* qsort's base must not be NULL, even for no elements */
		qsort(names, n, sizeof(*names), cmp_str);
	printf("\nTracepoints (%zu, from %s):\n", n, tfs);
	for (size_t i = 0; i < n; i++) {
		printf("  %-50s [tracepoint]\n", names[i]);
		free(names[i]);
	}
	free(names);
}

static void list_pmus(const char *filter)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;

	printf("\nPMUs (/sys/bus/event_source/devices; syntax pmu/term=value,.../):\n");
	if (!d) {
		printf("  none readable\n");
		return;
	}
	while ((de = readdir(d))) {
		char path[512], type[32] = "?";
		FILE *f;
		DIR *ed;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", de->d_name);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(type, sizeof(type), f))
				snprintf(type, sizeof(type), "?");
			type[strcspn(type, "\n")] = '\0';
			fclose(f);
		}
		if (match(filter, de->d_name))
			printf("  %-20s type %s\n", de->d_name, type);
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/events", de->d_name);
		ed = opendir(path);
		if (!ed)
			continue;
		{
			struct dirent *ev;

			while ((ev = readdir(ed))) {
				char name[600];

				if (ev->d_name[0] == '.' || strchr(ev->d_name, '.'))
					continue;
				snprintf(name, sizeof(name), "%s/%s/", de->d_name, ev->d_name);
				if (match(filter, name))
					printf("    %-48s [pmu event]\n", name);
			}
		}
		closedir(ed);
	}
	closedir(d);
}

int rec_cli_list(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	bool hw = host_has_hw_pmu();
	const char *name, *alias;
	uint32_t type;
	uint64_t config;
	char buf[64];

	if (filter && (!strcmp(filter, "-h") || !strcmp(filter, "--help"))) {
		printf("usage: perfrec list [FILTER]\n"
		       "Lists software, hardware, hw-cache events, tracepoints and PMUs;\n"
		       "FILTER keeps names that contain it.\n");
		return 0;
	}
	printf("Software events:\n");
	for (size_t i = 0; (name = rec_evnames_named(i, &type, &config, &alias)); i++) {
		if (type != PERF_TYPE_SOFTWARE || !match(filter, name))
			continue;
		if (alias)
			printf("  %-50s [software, alias of %s]\n", name, alias);
		else
			printf("  %-50s [software]\n", name);
	}
	if (hw) {
		printf("\nHardware events:\n");
		for (size_t i = 0; (name = rec_evnames_named(i, &type, &config, &alias)); i++) {
			if (type != PERF_TYPE_HARDWARE || !match(filter, name))
				continue;
			printf("  %-50s [hardware%s%s]\n", name, alias ? ", alias of " : "",
			       alias ? alias : "");
		}
		printf("\nHardware cache events:\n");
		for (size_t i = 0; rec_evnames_hwcache(i, buf, sizeof(buf), &config); i++)
			if (match(filter, buf))
				printf("  %-50s [hw-cache]\n", buf);
		printf("\nRaw events: rNNNN (hex config for the CPU PMU)\n");
	} else {
		printf("\nHardware and hw-cache events: none on this host (no hardware PMU "
		       "could be opened; a VM without PMU passthrough?)\n");
	}
	list_tracepoints(filter);
	list_pmus(filter);
	printf("\nBreakpoints: mem:ADDR[/LEN][:rwx]\n"
	       "Modifiers: :u :k :h (user/kernel/hypervisor only), :p (precise), :S "
	       "(leader sampling of a group {a,b}:S)\n");
	return 0;
}

