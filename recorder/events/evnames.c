/*
 * evnames.c - the named hardware, software and hw-cache events; see
 * evnames.h.
 */
#include "recorder/events/evnames.h"

#include <stdio.h>
#include <string.h>

struct named_event {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *alias_of;
};

static const struct named_event named_events[] = {
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, NULL },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, NULL },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, NULL },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, NULL },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, NULL },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, NULL },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, NULL },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, NULL },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, NULL },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, NULL },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, NULL },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, NULL },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, NULL },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, NULL },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, NULL },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, NULL },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, NULL },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, NULL },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, NULL },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, NULL },
	{ "bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, NULL },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES, NULL },
	/* aliases, as perf spells them */
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cpu-cycles" },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branch-instructions" },
	{ "idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "stalled-cycles-frontend" },
	{ "idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "stalled-cycles-backend" },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults" },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches" },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations" },
};

#define N_NAMED (sizeof(named_events) / sizeof(named_events[0]))

static const char *const cache_names[PERF_COUNT_HW_CACHE_MAX] = {
	"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node",
};
/* op x result suffixes, in hwcache listing order */
static const struct {
	const char *suffix;
	unsigned op, result;
} cache_ops[] = {
	{ "loads", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "load-misses", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "stores", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "store-misses", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "prefetch-misses", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_MISS },
};

#define N_CACHE_OPS (sizeof(cache_ops) / sizeof(cache_ops[0]))

const char *rec_evnames_named(size_t i, uint32_t *type, uint64_t *config,
			      const char **alias_of)
{
	if (i >= N_NAMED)
		return NULL;
	if (type)
		*type = named_events[i].type;
	if (config)
		*config = named_events[i].config;
	if (alias_of)
		*alias_of = named_events[i].alias_of;
	return named_events[i].name;
}

const char *rec_evnames_hwcache(size_t i, char *buf, size_t len,
				uint64_t *config)
{
	size_t c = i / N_CACHE_OPS, o = i % N_CACHE_OPS;

	if (c >= PERF_COUNT_HW_CACHE_MAX)
		return NULL;
	snprintf(buf, len, "%s-%s", cache_names[c], cache_ops[o].suffix);
	if (config)
		*config = c | (cache_ops[o].op << 8) | (cache_ops[o].result << 16);
	return buf;
}

bool rec_evnames_lookup(const char *name, uint32_t *type, uint64_t *config)
{
	for (size_t i = 0; i < N_NAMED; i++) {
		if (!strcmp(name, named_events[i].name)) {
			*type = named_events[i].type;
			*config = named_events[i].config;
			return true;
		}
	}
	for (size_t c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++) {
		size_t cl = strlen(cache_names[c]);

		if (strncmp(name, cache_names[c], cl) || name[cl] != '-')
			continue;
		for (size_t o = 0; o < N_CACHE_OPS; o++) {
			if (!strcmp(name + cl + 1, cache_ops[o].suffix)) {
				*type = PERF_TYPE_HW_CACHE;
				*config = c | (cache_ops[o].op << 8) |
					  (cache_ops[o].result << 16);
				return true;
			}
		}
	}
	return false;
}
