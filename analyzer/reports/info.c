/*
 * info.c - the trace overview: a summary that answers "what was this
 * host doing" (when, how long, the busiest processes, losses only when
 * there are any), then every detail of pass 1.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/reports/info.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/base/hashmap.h"
#include "analyzer/read/dataset.h"
#include "analyzer/read/trace.h"
#include "analyzer/symbols/resolve.h"
#include "format/error.h"

static void join(char *buf, size_t len, char **v, size_t n)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "", v[i] ? v[i] : "");
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* Samples per (event, process), counted by one pass over the samples. */
struct pkey {
	uint32_t ev, pid;
};

struct pval {
	uint64_t n;
	uint64_t t;   /* the last sample's time: the name the process had */
};

struct tally {
	struct ana_trace *s;
	struct prec_hashmap by;        /* pkey -> pval */
	uint64_t *per_ev;         /* [nevents] */
};

static int tally_sample(void *ctx, const struct prec_packet *p)
{
	struct tally *t = ctx;
	const Perfrec__Sample *smp;
	struct pkey k;
	struct pval *v;
	int ev, created;

	if (p->pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
		return 0;
	smp = p->pkt->sample;
	/* frame-pointer chains cut at junk frames, as report cuts them (every
	 * sample, whatever its event) */
	int cut = ana_resolve_cut(t->s, p);
	t->s->cut.chains += cut > 0;
	t->s->cut.frames += (uint64_t)cut;
	ev = ana_trace_event_of(t->s, smp->id);
	if (ev < 0 || (size_t)ev >= t->s->nevents)
		return 0;
	memset(&k, 0, sizeof(k));
	k.ev = (uint32_t)ev;
	k.pid = smp->pid;
	v = prec_hashmap_get(&t->by, &k, &created);
	if (!v)
		return -ENOMEM;
	v->n++;
	if (p->time > v->t)
		v->t = p->time;
	t->per_ev[ev]++;
	return 0;
}

static const struct tally *sort_tally;

static int by_samples(const void *a, const void *b)
{
	const struct pval *x = prec_hashmap_val(&sort_tally->by, *(const size_t *)a);
	const struct pval *y = prec_hashmap_val(&sort_tally->by, *(const size_t *)b);
	const struct pkey *kx = prec_hashmap_key(&sort_tally->by, *(const size_t *)a);
	const struct pkey *ky = prec_hashmap_key(&sort_tally->by, *(const size_t *)b);

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return kx->pid < ky->pid ? -1 : kx->pid > ky->pid;
}

/* The top processes of the sampling event with the most samples (the
 * clock that stands for CPU time in an ordinary recording). */
static int top_processes(struct ana_trace *s, size_t top, struct ana_doc *doc)
{
	struct tally t = { .s = s };
	size_t *order = NULL, n = 0, best = 0;
	char title[256];
	int ret;

	prec_hashmap_init(&t.by, sizeof(struct pkey), sizeof(struct pval));
	t.per_ev = calloc(s->nevents + 1, sizeof(*t.per_ev));
	if (!t.per_ev) {
		ret = -ENOMEM;
		goto out;
	}
	ana_trace_set_kinds(s, PREC_KIND(PERFREC__PACKET__DATA_SAMPLE));
	ret = ana_trace_scan(s, "info", tally_sample, &t);
	ana_trace_set_kinds(s, 0);
	if (ret < 0)
		goto out;
	for (size_t i = 1; i < s->nevents; i++)
		if (t.per_ev[i] > t.per_ev[best])
			best = i;
	if (!s->nevents || !t.per_ev[best])
		goto out;
	order = malloc((prec_hashmap_count(&t.by) + 1) * sizeof(*order));
	if (!order) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < prec_hashmap_count(&t.by); i++)
		if (((const struct pkey *)prec_hashmap_key(&t.by, i))->ev == best)
			order[n++] = i;
	sort_tally = &t;
	prec_sort(order, n, sizeof(*order), by_samples);
	sort_tally = NULL;
	snprintf(title, sizeof(title), "Top processes by %s samples",
		 ana_trace_event_name(s, (int)best));
	struct ana_table *tt = ana_doc_table(doc, "top", title);
	ana_table_col(tt, "comm", "Command", ANA_STR);
	ana_table_col(tt, "pid", "Pid", ANA_NUM);
	ana_table_col(tt, "samples", "Samples", ANA_NUM);
	ana_table_col(tt, "pct", "Share", ANA_PCT);
	for (size_t i = 0; i < n && i < top; i++) {
		const struct pkey *k = prec_hashmap_key(&t.by, order[i]);
		const struct pval *v = prec_hashmap_val(&t.by, order[i]);
		const char *comm = ana_trace_comm(s, k->pid, v->t);

		ana_table_row(tt);
		ana_cell_str(tt, comm ? comm : "?");
		ana_cell_num(tt, "%" PRIu32, k->pid);
		ana_cell_num(tt, "%" PRIu64, v->n);
		ana_cell_num(tt, "%.2f", 100.0 * (double)v->n / (double)t.per_ev[best]);
	}
out:
	free(order);
	free(t.per_ev);
	prec_hashmap_release(&t.by);
	return ret;
}

/* What a person asks first, in a few lines, into kv. */
static void summary(struct ana_trace *s, struct ana_table *kv)
{
	const Perfrec__FileHeader *h = s->header;
	uint64_t end = s->end && s->end->end_time ? s->end->end_time : s->t_max;
	uint64_t lost = 0, events = s->samples + s->switches;
	char buf[512];
	size_t o;

	if (h) {
		snprintf(buf, sizeof(buf), "%s (%s %s, %s, %" PRIu32 " CPUs)",
			 h->hostname ? h->hostname : "", h->kernel_release ? h->kernel_release : "",
			 h->machine ? h->machine : "", h->cpu_model ? h->cpu_model : "",
			 h->cpus_online);
		ana_kv_str(kv, "host", buf);
	}
	if (h && h->realtime_ns) {
		/* the header's clock reference: wall = realtime + (mono - ref) */
		int64_t wall = (int64_t)h->realtime_ns + ((int64_t)s->start - (int64_t)h->monotonic_ns);
		time_t sec = (time_t)(wall / 1000000000);
		struct tm tm;

		if (wall > 0 && gmtime_r(&sec, &tm)) {
			strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
			o = strlen(buf);
			snprintf(buf + o, sizeof(buf) - o, ".%03d UTC",
				 (int)(wall % 1000000000 / 1000000));
			ana_kv_str(kv, "started", buf);
		}
	}
	snprintf(buf, sizeof(buf), "%.3f s", end > s->start ? secs(end - s->start) : 0.0);
	ana_kv_str(kv, "duration", buf);
	if (h) {
		const char *tg = h->target ? h->target : "";

		if (h->n_workload && (!*tg || !strcmp(tg, "command")))
			o = (size_t)snprintf(buf, sizeof(buf), "command: ");
		else
			o = (size_t)snprintf(buf, sizeof(buf), "%s%s", tg,
					     h->n_workload ? " while running: " : "");
		if (h->n_workload && o < sizeof(buf))
			join(buf + o, sizeof(buf) - o, h->workload, h->n_workload);
		ana_kv_str(kv, "target", buf);
	}
	o = (size_t)snprintf(buf, sizeof(buf), "%" PRIu64 " samples", s->samples);
	if (s->switches && o < sizeof(buf))
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, ", %" PRIu64 " context switches",
				      s->switches);
	if ((s->offcpu_intervals || s->offcpu_sums) && o < sizeof(buf))
		snprintf(buf + o, sizeof(buf) - o, ", %.3f ms off-CPU",
			 (double)s->offcpu_ns / 1e6);
	ana_kv_str(kv, "recorded", buf);
	ana_kv_str(kv, "stopped", s->end ? s->end->stop_reason :
		   "no session end (recorder killed?)");
	/* EVENT_LOST breaks KERNEL_LOST down by event: the same samples,
	 * named beside the total but not added to it */
	for (int k = 0; k < ANA_NLOSS; k++)
		if (k != PERFREC__LOSS__KIND__EVENT_LOST)
			lost += s->loss_count[k];
	if (lost || s->loss_count[PERFREC__LOSS__KIND__EVENT_LOST]) {
		o = (size_t)snprintf(buf, sizeof(buf), "%" PRIu64 " (%.2f%% of events:", lost,
				     100.0 * (double)lost / (double)(events + lost));
		for (int k = 0; k < ANA_NLOSS && o < sizeof(buf); k++)
			if (s->loss_count[k] && k != PERFREC__LOSS__KIND__EVENT_LOST)
				o += (size_t)snprintf(buf + o, sizeof(buf) - o, " %s %" PRIu64,
						      ana_loss_kind_name(k), s->loss_count[k]);
		if (s->loss_count[PERFREC__LOSS__KIND__EVENT_LOST] && o < sizeof(buf))
			o += (size_t)snprintf(buf + o, sizeof(buf) - o,
					      "; of which by event %" PRIu64,
					      s->loss_count[PERFREC__LOSS__KIND__EVENT_LOST]);
		if (o < sizeof(buf))
			snprintf(buf + o, sizeof(buf) - o, ")");
		ana_kv_str(kv, "lost", buf);
	}
	if (s->ndamage || s->torn) {
		snprintf(buf, sizeof(buf), "%zu damaged frames%s", s->ndamage,
			 s->torn ? ", torn tail (recording cut short)" : "");
		ana_kv_str(kv, "damage", buf);
	}
}

int ana_info_run(struct ana_trace *s, size_t top, struct ana_doc *doc)
{
	char buf[4096];
	int ret;

	/* the summary leads, but is written after the samples' pass counted */
	struct ana_table *sum = ana_doc_kv(doc, "summary");
	if (top && (ret = top_processes(s, top, doc)) < 0)
		return ret;
	summary(s, sum);
	struct ana_table *kv = ana_doc_kv(doc, "info");
	const Perfrec__FileHeader *h = s->header;
	struct prec_reader_stats rs;
	prec_reader_stats(s->reader, &rs);
	ana_kv_str(kv, "file", s->path);
	ana_kv_num(kv, "file_size", "%" PRIu64, rs.file_size);
	snprintf(buf, sizeof(buf), "%" PRIu32 ".%" PRIu32, rs.version_major, rs.version_minor);
	ana_kv_str(kv, "format_version", buf);
	if (h) {
		ana_kv_str(kv, "recorder", h->recorder_version);
		ana_kv_str(kv, "hostname", h->hostname);
		snprintf(buf, sizeof(buf), "%s %s", h->kernel_release ? h->kernel_release : "",
			 h->kernel_version ? h->kernel_version : "");
		ana_kv_str(kv, "kernel", buf);
		ana_kv_str(kv, "machine", h->machine);
		ana_kv_str(kv, "cpu_model", h->cpu_model);
		ana_kv_num(kv, "cpus_online", "%" PRIu32, h->cpus_online);
		ana_kv_num(kv, "mem_total", "%" PRIu64, h->mem_total);
		join(buf, sizeof(buf), h->cmdline, h->n_cmdline);
		ana_kv_str(kv, "cmdline", buf);
		ana_kv_str(kv, "target", h->target);
		if (h->n_workload) {
			join(buf, sizeof(buf), h->workload, h->n_workload);
			ana_kv_str(kv, "workload", buf);
			ana_kv_num(kv, "workload_pid", "%" PRId32, h->workload_pid);
		}
		ana_kv_num(kv, "perf_event_paranoid", "%" PRId32, h->perf_event_paranoid);
	} else {
		ana_kv_str(kv, "header", "missing (first frame lost?)");
	}
	ana_kv_num(kv, "start_s", "%.9f", secs(s->start));
	uint64_t end = s->end && s->end->end_time ? s->end->end_time : s->t_max;
	ana_kv_num(kv, "duration_s", "%.9f", end > s->start ? secs(end - s->start) : 0.0);
	if (s->end) {
		ana_kv_str(kv, "stop_reason", s->end->stop_reason);
		if (h && h->n_workload)
			ana_kv_num(kv, "exit_status", "%" PRId32, s->end->exit_status);
	} else {
		ana_kv_str(kv, "stop_reason", "no session end (recorder killed?)");
	}
	ana_kv_num(kv, "samples", "%" PRIu64, s->samples);
	ana_kv_num(kv, "switches", "%" PRIu64, s->switches);
	ana_kv_num(kv, "throttles", "%" PRIu64, s->throttles);
	if (s->offcpu_intervals || s->offcpu_sums) {
		/* record --off-cpu */
		ana_kv_num(kv, "offcpu_intervals", "%" PRIu64, s->offcpu_intervals);
		ana_kv_num(kv, "offcpu_sums", "%" PRIu64, s->offcpu_sums);
		ana_kv_num(kv, "offcpu_ms", "%.3f", (double)s->offcpu_ns / 1e6);
	}
	/* record's embedded symbol tables: what they cost the recorder */
	if (s->end && (s->end->symbol_bytes || s->end->symbol_time_ns)) {
		ana_kv_num(kv, "symbol_bytes", "%" PRIu64, s->end->symbol_bytes);
		ana_kv_num(kv, "symbol_time_ms", "%.1f", s->end->symbol_time_ns / 1e6);
	}
	if (s->cut.frames) {   /* junk ends of frame-pointer chains (resolve.h) */
		ana_kv_num(kv, "cut_chains", "%" PRIu64, s->cut.chains);
		ana_kv_num(kv, "cut_frames", "%" PRIu64, s->cut.frames);
	}
	ana_kv_num(kv, "frames", "%zu", s->nframes);
	ana_kv_num(kv, "good_frames", "%" PRIu64, s->good_frames);
	ana_kv_num(kv, "damaged_frames", "%zu", s->ndamage);
	ana_kv_str(kv, "torn_tail", s->torn ? "yes" : "no");
	ana_kv_str(kv, "index", s->index_present ? "present" :
		   s->index_rebuilt ? "rebuilt (no valid trailing index)" : "none");
	ana_kv_num(kv, "bytes_compressed", "%" PRIu64, s->bytes_compressed);
	ana_kv_num(kv, "bytes_raw", "%" PRIu64, s->bytes_raw);
	ana_kv_num(kv, "compression_ratio", "%.2f", s->bytes_compressed ?
		   (double)s->bytes_raw / (double)s->bytes_compressed : 0.0);

	struct ana_table *ev = ana_doc_table(doc, "events", "Events");
	ana_table_col(ev, "index", "Index", ANA_NUM);
	ana_table_col(ev, "name", "Name", ANA_STR);
	ana_table_col(ev, "type", "Type", ANA_NUM);
	ana_table_col(ev, "config", "Config", ANA_STR);
	ana_table_col(ev, "sampling", "Sampling", ANA_STR);
	ana_table_col(ev, "period", "Period/freq", ANA_STR);
	ana_table_col(ev, "group", "Group", ANA_NUM);
	ana_table_col(ev, "ids", "Ids", ANA_NUM);
	ana_table_col(ev, "error", "Error", ANA_STR);
	int bpf = 0;
	for (size_t i = 0; i < s->nevents; i++)
		bpf |= (s->events[i]->filter && *s->events[i]->filter) ||
		       s->events[i]->bpf_output;
	if (bpf)   /* record --filter / --off-cpu */
		ana_table_col(ev, "bpf", "BPF", ANA_STR);
	for (size_t i = 0; i < s->nevents; i++) {
		const Perfrec__EventDesc *e = s->events[i];
		ana_table_row(ev);
		ana_cell_num(ev, "%" PRIu32, e->index);
		ana_cell_str(ev, ana_trace_event_name(s, (int)i));
		ana_cell_num(ev, "%" PRIu32, e->type);
		snprintf(buf, sizeof(buf), "0x%" PRIx64, e->config);
		ana_cell_str(ev, buf);
		ana_cell_str(ev, e->sampling ? "yes" : "no");
		if (!e->sampling)
			buf[0] = '\0';
		else if (e->freq)
			snprintf(buf, sizeof(buf), "%" PRIu64 " Hz", e->sample_freq);
		else
			snprintf(buf, sizeof(buf), "%" PRIu64, e->sample_period);
		ana_cell_str(ev, buf);
		ana_cell_num(ev, "%" PRId32, e->group);
		ana_cell_num(ev, "%zu", e->n_ids);
		ana_cell_str(ev, e->error);
		if (!bpf)
			continue;
		if (e->bpf_output)
			snprintf(buf, sizeof(buf), "off-CPU output (threshold %.3f ms)",
				 (double)e->off_cpu_threshold / 1e6);
		else if (e->filter && *e->filter)
			snprintf(buf, sizeof(buf), "filter: %s", e->filter);
		else
			buf[0] = '\0';
		ana_cell_str(ev, buf);
	}

	if (prec_hashmap_count(&s->filtered)) {
		/* record --filter: samples the kernel dropped on purpose */
		struct ana_table *ft = ana_doc_table(doc, "filtered", "Filtered samples");
		ana_table_col(ft, "event", "Event", ANA_STR);
		ana_table_col(ft, "kept", "Kept", ANA_NUM);
		ana_table_col(ft, "filtered", "Filtered", ANA_NUM);
		ana_table_col(ft, "pct", "Filtered %", ANA_PCT);
		for (size_t i = 0; i < s->nevents; i++) {
			uint32_t idx = s->events[i]->index;
			const struct ana_filtered *fc = prec_hashmap_find(&s->filtered, &idx);
			if (!fc)
				continue;
			uint64_t all = fc->kept + fc->dropped;
			ana_table_row(ft);
			ana_cell_str(ft, ana_trace_event_name(s, (int)i));
			ana_cell_num(ft, "%" PRIu64, fc->kept);
			ana_cell_num(ft, "%" PRIu64, fc->dropped);
			ana_cell_num(ft, "%.2f", all ? 100.0 * (double)fc->dropped / (double)all : 0.0);
		}
	}

	if (s->ngroups) {
		struct ana_table *gt = ana_doc_table(doc, "groups", "Groups");
		ana_table_col(gt, "index", "Index", ANA_NUM);
		ana_table_col(gt, "name", "Name", ANA_STR);
		ana_table_col(gt, "members", "Members", ANA_NUM);
		ana_table_col(gt, "counting", "Counting", ANA_STR);
		ana_table_col(gt, "interval_ms", "Interval ms", ANA_NUM);
		for (size_t i = 0; i < s->ngroups; i++) {
			const Perfrec__GroupDesc *g = s->groups[i];
			ana_table_row(gt);
			ana_cell_num(gt, "%" PRIu32, g->index);
			ana_cell_str(gt, g->name);
			ana_cell_num(gt, "%zu", g->n_events);
			ana_cell_str(gt, g->counting ? "yes" : "no");
			ana_cell_num(gt, "%.3f", (double)g->interval_ns / 1e6);
		}
	}

	struct ana_table *pk = ana_doc_table(doc, "packets", "Packets");
	ana_table_col(pk, "kind", "Kind", ANA_STR);
	ana_table_col(pk, "count", "Count", ANA_NUM);
	for (int k = 0; k < ANA_NKINDS; k++) {
		if (!s->kind_count[k])
			continue;
		ana_table_row(pk);
		ana_cell_str(pk, ana_kind_name(k));
		ana_cell_num(pk, "%" PRIu64, s->kind_count[k]);
	}
	if (s->unknown_packets) {
		ana_table_row(pk);
		ana_cell_str(pk, "skipped_unknown");
		ana_cell_num(pk, "%" PRIu64, s->unknown_packets);
	}

	struct ana_table *lt = ana_doc_table(doc, "losses", "Losses");
	ana_table_col(lt, "kind", "Kind", ANA_STR);
	ana_table_col(lt, "records", "Records", ANA_NUM);
	ana_table_col(lt, "lost", "Lost", ANA_NUM);
	ana_table_col(lt, "pct", "Of events", ANA_PCT);
	uint64_t events = s->samples + s->switches;
	for (int k = 0; k < ANA_NLOSS; k++) {
		/* the first five always; later kinds (sender, BPF) when met */
		if (k >= 5 && !s->loss_records[k] && !s->loss_count[k])
			continue;
		ana_table_row(lt);
		ana_cell_str(lt, ana_loss_kind_name(k));
		ana_cell_num(lt, "%" PRIu64, s->loss_records[k]);
		ana_cell_num(lt, "%" PRIu64, s->loss_count[k]);
		uint64_t all = events + s->loss_count[k];
		ana_cell_num(lt, "%.2f", all ? 100.0 * (double)s->loss_count[k] / (double)all : 0.0);
	}

	if (s->ndamage) {
		struct ana_table *dt = ana_doc_table(doc, "damage", "Damaged frames");
		ana_table_col(dt, "offset", "Offset", ANA_NUM);
		ana_table_col(dt, "error", "Error", ANA_STR);
		ana_table_col(dt, "packets", "Packets lost", ANA_NUM);
		for (size_t i = 0; i < s->ndamage; i++) {
			int64_t k = ana_trace_damage_packets(s, i);
			ana_table_row(dt);
			ana_cell_num(dt, "%" PRIu64, s->damage[i].offset);
			ana_cell_str(dt, prec_strerror(s->damage[i].err));
			if (k >= 0)
				ana_cell_num(dt, "%" PRId64, k);
			else
				ana_cell_null(dt, "unknown");
		}
	}
	if (s->nnotes) {
		static const char *const lv[] = { "info", "warning", "error" };
		struct ana_table *nt = ana_doc_table(doc, "notes", "Notes");
		ana_table_col(nt, "level", "Level", ANA_STR);
		ana_table_col(nt, "text", "Text", ANA_STR);
		for (size_t i = 0; i < s->nnotes; i++) {
			ana_table_row(nt);
			ana_cell_str(nt, (unsigned)s->notes[i].level < 3 ? lv[s->notes[i].level] : "?");
			ana_cell_str(nt, s->notes[i].text);
		}
	}
	return 0;
}

static const char *const state_names[] = { "whole", "open", "torn" };

/* UTC "YYYY-MM-DD HH:MM:SS" of realtime ns, "-" when unknown. */
static void wall_str(char *buf, size_t len, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	if (!ns || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
}

int ana_info_dataset(const struct ana_dataset *ds, struct ana_doc *doc)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < ds->nfiles; i++)
		bytes += ds->files[i].bytes;
	struct ana_table *kv = ana_doc_kv(doc, "dataset");
	ana_kv_num(kv, "files", "%zu", ds->nfiles);
	ana_kv_num(kv, "hosts", "%zu", ds->nhosts);
	ana_kv_num(kv, "sessions", "%zu", ds->nsessions);
	ana_kv_num(kv, "bytes", "%" PRIu64, bytes);
	if (ds->nskipped)
		ana_kv_num(kv, "skipped_files", "%zu", ds->nskipped);
	if (ds->ndups)
		ana_kv_num(kv, "duplicate_files", "%zu", ds->ndups);

	struct ana_table *t = ana_doc_table(doc, "sessions", "Sessions");
	ana_table_col(t, "host", "Host", ANA_STR);
	ana_table_col(t, "session", "Session", ANA_STR);
	ana_table_col(t, "start", "Start (UTC)", ANA_STR);
	ana_table_col(t, "duration_s", "Duration s", ANA_NUM);
	ana_table_col(t, "files", "Files", ANA_NUM);
	ana_table_col(t, "bytes", "Bytes", ANA_NUM);
	ana_table_col(t, "samples", "Samples", ANA_NUM);
	ana_table_col(t, "lost", "Lost", ANA_NUM);
	ana_table_col(t, "state", "State", ANA_STR);
	char when[64];
	for (size_t i = 0; i < ds->nfiles;) {
		const struct ana_dataset_file *f = &ds->files[i];
		size_t j = i, files = 0;
		uint64_t b = 0, smp = 0, lost = 0, end = f->end;
		int state = ANA_FILE_WHOLE;
		for (; j < ds->nfiles && ds->files[j].session_no == f->session_no; j++, files++) {
			const struct ana_dataset_file *g = &ds->files[j];
			b += g->bytes;
			smp += g->samples;
			lost += g->lost;
			end = g->end;
			if (g->state > state)
				state = g->state;
		}
		wall_str(when, sizeof(when), f->wall_start);
		ana_table_row(t);
		ana_cell_str(t, f->host);
		ana_cell_str(t, f->session);
		ana_cell_str(t, when);
		ana_cell_num(t, "%.3f", secs(end > f->start ? end - f->start : 0));
		ana_cell_num(t, "%zu", files);
		ana_cell_num(t, "%" PRIu64, b);
		ana_cell_num(t, "%" PRIu64, smp);
		ana_cell_num(t, "%" PRIu64, lost);
		ana_cell_str(t, state_names[state]);
		i = j;
	}

	t = ana_doc_table(doc, "files", "Files");
	ana_table_col(t, "path", "File", ANA_STR);
	ana_table_col(t, "host", "Host", ANA_STR);
	ana_table_col(t, "start", "Start (UTC)", ANA_STR);
	ana_table_col(t, "duration_s", "Duration s", ANA_NUM);
	ana_table_col(t, "bytes", "Bytes", ANA_NUM);
	ana_table_col(t, "samples", "Samples", ANA_NUM);
	ana_table_col(t, "state", "State", ANA_STR);
	for (size_t i = 0; i < ds->nfiles; i++) {
		const struct ana_dataset_file *f = &ds->files[i];
		wall_str(when, sizeof(when), f->wall_start);
		ana_table_row(t);
		ana_cell_str(t, f->path);
		ana_cell_str(t, f->host);
		ana_cell_str(t, when);
		ana_cell_num(t, "%.3f", secs(f->end > f->start ? f->end - f->start : 0));
		ana_cell_num(t, "%" PRIu64, f->bytes);
		ana_cell_num(t, "%" PRIu64, f->samples);
		ana_cell_str(t, f->damaged ? "damaged" : state_names[f->state]);
	}

	t = ana_doc_table(doc, "events", "Events");
	ana_table_col(t, "name", "Event", ANA_STR);
	for (size_t i = 0; i < ds->nevents; i++) {
		ana_table_row(t);
		ana_cell_str(t, ds->events[i]);
	}
	return 0;
}
