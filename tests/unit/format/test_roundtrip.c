/*
 * test_roundtrip.c - every packet kind written by prec_writer comes back
 * from prec_reader with the same fields, absolute times and resolved iids.
 */
#include "fmt_helpers.h"
#include "format/layout.h"

#include "format/layout.h"

static uint64_t t0 = 1000000000ull;

/* Writes one packet of every oneof kind on stream 0 and 1; returns bytes. */
static unsigned char *write_all_kinds(size_t *len)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w;
	Perfrec__Packet pkt;
	unsigned char *buf;

	assert_non_null(sink);
	w = prec_writer_new(sink, NULL);
	assert_non_null(w);

	/* header */
	Perfrec__FileHeader h = PERFREC__FILE_HEADER__INIT;
	Perfrec__CpuInfo c0 = PERFREC__CPU_INFO__INIT, c1 = PERFREC__CPU_INFO__INIT;
	Perfrec__CpuInfo *cpus[2] = { &c0, &c1 };
	char *argv[] = { "perfrec", "record", "-a" };
	c0.cpu = 0; c0.core_id = 0; c1.cpu = 1; c1.core_id = 1; c1.numa_node = 1;
	h.recorder_version = "0.1.0";
	h.hostname = "host-a";
	h.kernel_release = "6.1.0-test";
	h.cpus_online = 2;
	h.n_cpus = 2;
	h.cpus = cpus;
	h.page_size = 4096;
	h.realtime_ns = 1700000000000000000ull;
	h.monotonic_ns = t0;
	h.n_cmdline = 3;
	h.cmdline = argv;
	h.perf_event_paranoid = -1;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_HEADER;
	pkt.header = &h;
	assert_int_equal(prec_writer_append(w, 0, &pkt, 0), 0);

	/* event */
	Perfrec__EventDesc ev = PERFREC__EVENT_DESC__INIT;
	uint64_t ids[2] = { 11, 12 };
	int32_t ecpus[2] = { 0, 1 }, pids[2] = { -1, -1 };
	ev.index = 0; ev.name = "cpu-clock"; ev.type = 1; ev.config = 0;
	ev.sample_freq = 999; ev.freq = 1; ev.sample_type = 0x1234;
	ev.n_ids = 2; ev.ids = ids; ev.n_cpus = 2; ev.cpus = ecpus;
	ev.n_pids = 2; ev.pids = pids; ev.group = -1; ev.sampling = 1;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_EVENT;
	pkt.event = &ev;
	assert_int_equal(prec_writer_append(w, 0, &pkt, 0), 0);

	/* group desc */
	Perfrec__GroupDesc gd = PERFREC__GROUP_DESC__INIT;
	uint32_t evs[2] = { 0, 1 };
	gd.index = 3; gd.name = "{a,b}"; gd.n_events = 2; gd.events = evs;
	gd.counting = 1; gd.interval_ns = 100000000;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_GROUP_DESC;
	pkt.group_desc = &gd;
	assert_int_equal(prec_writer_append(w, 0, &pkt, 0), 0);

	/* note */
	Perfrec__Note note = PERFREC__NOTE__INIT;
	note.level = PERFREC__NOTE__LEVEL__WARNING;
	note.text = "kernel addresses hidden";
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_NOTE;
	pkt.note = &note;
	assert_int_equal(prec_writer_append(w, 0, &pkt, t0 + 5), 0);

	/* sample with callchain, raw and group read on stream 1 */
	uint64_t ips[4] = { (uint64_t)-128, 0xffffffff81000010ull, (uint64_t)-512, 0x401000 };
	uint64_t cc = prec_writer_intern_callchain(w, 1, ips, 4);
	assert_true(cc >= 1);
	assert_int_equal(prec_writer_intern_callchain(w, 1, ips, 4), cc);
	Perfrec__Sample s;
	Perfrec__GroupRead gr = PERFREC__GROUP_READ__INIT;
	uint64_t rids[2] = { 11, 12 }, rvals[2] = { 100, 200 };
	uint8_t raw[5] = { 1, 2, 3, 0, 5 };
	fmt_sample(&pkt, &s, 1, 42, 0x401000, cc);
	s.id = 11; s.raw.len = 5; s.raw.data = raw; s.addr = 0xdead; s.misc = 2;
	gr.time_enabled = 10; gr.time_running = 9;
	gr.n_ids = 2; gr.ids = rids; gr.n_values = 2; gr.values = rvals;
	s.read = &gr;
	/* --call-graph dwarf: user registers (BP SP IP) and a stack copy */
	uint64_t uregs[3] = { 0x7ffd0010, 0x7ffd0000, 0x401234 };
	uint8_t ustack[300];
	for (int i = 0; i < 300; i++)
		ustack[i] = (uint8_t)(i * 7);
	s.regs_abi = 2; s.regs_mask = 0x1c0; s.n_regs = 3; s.regs = uregs;
	s.stack.len = 300; s.stack.data = ustack; s.stack_dyn_size = 8192;
	assert_int_equal(prec_writer_append(w, 1, &pkt, t0 + 100), 0);

	/* context switch */
	Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;
	cs.cpu = 1; cs.pid = 42; cs.tid = 43; cs.out = 1; cs.preempt = 1;
	cs.cpu_wide = 1; cs.other_pid = 7; cs.other_tid = 8;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
	pkt.context_switch = &cs;
	assert_int_equal(prec_writer_append(w, 1, &pkt, t0 + 90), 0);  /* earlier: dt < 0 */

	/* task with interned comm */
	Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
	te.kind = PERFREC__TASK_EVENT__KIND__COMM; te.pid = 42; te.tid = 43;
	te.comm = prec_writer_intern_string(w, 1, "worker");
	te.exec = 1;
	assert_true(te.comm >= 1);
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_TASK;
	pkt.task = &te;
	assert_int_equal(prec_writer_append(w, 1, &pkt, t0 + 200), 0);

	/* mmap with interned filename and build id */
	Perfrec__Mmap mm = PERFREC__MMAP__INIT;
	uint8_t bid[20] = { 0xab, 0xcd };
	mm.pid = 42; mm.start = 0x400000; mm.len = 0x1000; mm.pgoff = 0;
	mm.filename = prec_writer_intern_string(w, 1, "/usr/bin/app");
	mm.build_id.len = 20; mm.build_id.data = bid; mm.prot = 5;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_MMAP;
	pkt.mmap = &mm;
	assert_int_equal(prec_writer_append(w, 1, &pkt, t0 + 300), 0);

	/* loss */
	Perfrec__Loss loss = PERFREC__LOSS__INIT;
	loss.kind = PERFREC__LOSS__KIND__KERNEL_LOST; loss.id = 11; loss.cpu = 1;
	loss.count = 77; loss.reason = "ring full";
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_LOSS;
	pkt.loss = &loss;
	assert_int_equal(prec_writer_append(w, 1, &pkt, 0), 0);   /* inherits t0+300 */

	/* throttle */
	Perfrec__Throttle th = PERFREC__THROTTLE__INIT;
	th.throttled = 1; th.id = 11; th.cpu = 1;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_THROTTLE;
	pkt.throttle = &th;
	assert_int_equal(prec_writer_append(w, 1, &pkt, t0 + 400), 0);

	/* group snapshot */
	Perfrec__GroupSnapshot gs = PERFREC__GROUP_SNAPSHOT__INIT;
	Perfrec__GroupRead gr2 = PERFREC__GROUP_READ__INIT;
	uint64_t lost[2] = { 0, 3 };
	gr2.time_enabled = 1000; gr2.time_running = 500;
	gr2.n_ids = 2; gr2.ids = rids; gr2.n_values = 2; gr2.values = rvals;
	gr2.n_lost = 2; gr2.lost = lost;
	gs.group = 3; gs.cpu = -1; gs.pid = 42; gs.read = &gr2; gs.final = 1;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_GROUP;
	pkt.group = &gs;
	assert_int_equal(prec_writer_append(w, 0, &pkt, t0 + 500), 0);

	/* raw record */
	Perfrec__RawRecord rr = PERFREC__RAW_RECORD__INIT;
	rr.type = 99; rr.misc = 1; rr.data.len = 3; rr.data.data = raw; rr.cpu = 1;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_RAW;
	pkt.raw = &rr;
	assert_int_equal(prec_writer_append(w, 1, &pkt, t0 + 600), 0);

	/* symbol table with interned names */
	Perfrec__SymbolTable sym = PERFREC__SYMBOL_TABLE__INIT;
	uint64_t starts[2] = { 0x1000, 0x20 }, sizes[2] = { 0x20, 0x40 }, names[2];
	names[0] = prec_writer_intern_string(w, 0, "main");
	names[1] = prec_writer_intern_string(w, 0, "helper");
	sym.kind = PERFREC__SYMBOL_TABLE__KIND__ELF; sym.path = "/usr/bin/app";
	sym.n_starts = 2; sym.starts = starts; sym.n_sizes = 2; sym.sizes = sizes;
	sym.n_names = 2; sym.names = names; sym.load_bias = 0x400000;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
	pkt.symbols = &sym;
	assert_int_equal(prec_writer_append(w, 0, &pkt, 0), 0);

	/* unwind table: an .eh_frame piece and the whole .eh_frame_hdr */
	Perfrec__UnwindTable ut = PERFREC__UNWIND_TABLE__INIT;
	Perfrec__UnwindSection us0 = PERFREC__UNWIND_SECTION__INIT;
	Perfrec__UnwindSection us1 = PERFREC__UNWIND_SECTION__INIT;
	Perfrec__UnwindSection *usp[2] = { &us0, &us1 };
	uint8_t ehf[4] = { 0x14, 0, 0, 0 }, hdr[4] = { 1, 0x1b, 3, 0x3b };
	uint64_t loff[1] = { 0 }, lva[1] = { 0x400000 }, lsz[1] = { 0x2000 };
	us0.kind = PERFREC__UNWIND_SECTION__KIND__EH_FRAME;
	us0.addr = 0x402000; us0.size = 0x80; us0.offset = 0x40;
	us0.data.len = 4; us0.data.data = ehf;
	us1.kind = PERFREC__UNWIND_SECTION__KIND__EH_FRAME_HDR;
	us1.addr = 0x401f00; us1.size = 4; us1.data.len = 4; us1.data.data = hdr;
	ut.path = "/usr/bin/app"; ut.build_id.len = 20; ut.build_id.data = bid;
	ut.n_sections = 2; ut.sections = usp;
	ut.n_load_offsets = 1; ut.load_offsets = loff;
	ut.n_load_vaddrs = 1; ut.load_vaddrs = lva;
	ut.n_load_sizes = 1; ut.load_sizes = lsz;
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_UNWIND;
	pkt.unwind = &ut;
	assert_int_equal(prec_writer_append(w, 0, &pkt, 0), 0);

	/* session end */
	Perfrec__SessionEnd se = PERFREC__SESSION_END__INIT;
	Perfrec__CpuStats cst = PERFREC__CPU_STATS__INIT;
	Perfrec__CpuStats *cstp[1] = { &cst };
	cst.cpu = 1; cst.samples = 1; cst.lost = 77;
	se.end_time = t0 + 700; se.samples = 1; se.lost = 77; se.n_cpus = 1; se.cpus = cstp;
	se.stop_reason = "signal";
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_SESSION_END;
	pkt.session_end = &se;
	assert_int_equal(prec_writer_append(w, 0, &pkt, t0 + 700), 0);

	assert_int_equal(prec_writer_close(w), 0);
	assert_int_equal(prec_writer_close(w), 0);   /* idempotent */
	prec_writer_free(w);
	buf = fmt_copy_sink(sink, len);
	prec_sink_free(sink);
	return buf;
}

static void test_every_kind(void **state)
{
	size_t len;
	unsigned char *buf = write_all_kinds(&len);
	struct prec_reader *r;
	struct prec_packet p;
	int seen[32] = { 0 };
	int ret, n = 0, interned = 0;
	(void)state;

	r = prec_reader_open_mem(buf, len, NULL);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		const Perfrec__Packet *k = p.pkt;
		size_t nips;
		const uint64_t *ips;
		seen[k->data_case]++;
		n++;
		switch (k->data_case) {
		case PERFREC__PACKET__DATA_HEADER:
			assert_int_equal(p.stream, 0);
			assert_string_equal(k->header->hostname, "host-a");
			assert_string_equal(k->header->kernel_release, "6.1.0-test");
			assert_int_equal(k->header->n_cpus, 2);
			assert_int_equal(k->header->cpus[1]->numa_node, 1);
			assert_int_equal(k->header->n_cmdline, 3);
			assert_string_equal(k->header->cmdline[2], "-a");
			assert_int_equal(k->header->perf_event_paranoid, -1);
			assert_int_equal(k->header->realtime_ns, 1700000000000000000ull);
			assert_int_equal(p.time, 0);
			break;
		case PERFREC__PACKET__DATA_EVENT:
			assert_string_equal(k->event->name, "cpu-clock");
			assert_int_equal(k->event->n_ids, 2);
			assert_int_equal(k->event->ids[1], 12);
			assert_int_equal(k->event->pids[0], -1);
			assert_int_equal(k->event->group, -1);
			assert_int_equal(k->event->sample_type, 0x1234);
			break;
		case PERFREC__PACKET__DATA_GROUP_DESC:
			assert_string_equal(k->group_desc->name, "{a,b}");
			assert_int_equal(k->group_desc->events[1], 1);
			assert_int_equal(k->group_desc->interval_ns, 100000000);
			break;
		case PERFREC__PACKET__DATA_NOTE:
			assert_int_equal(k->note->level, PERFREC__NOTE__LEVEL__WARNING);
			assert_string_equal(k->note->text, "kernel addresses hidden");
			assert_int_equal(p.time, t0 + 5);
			break;
		case PERFREC__PACKET__DATA_SAMPLE:
			assert_int_equal(p.stream, 1);
			assert_int_equal(p.time, t0 + 100);
			assert_int_equal(k->sample->pid, 42);
			assert_int_equal(k->sample->ip, 0x401000);
			assert_int_equal(k->sample->raw.len, 5);
			assert_int_equal(k->sample->raw.data[4], 5);
			assert_int_equal(k->sample->read->values[1], 200);
			assert_int_equal(k->sample->read->time_running, 9);
			assert_int_equal(k->sample->addr, 0xdead);
			ips = prec_frame_callchain(p.frame, k->sample->callchain, &nips);
			assert_non_null(ips);
			assert_int_equal(nips, 4);
			assert_int_equal(ips[0], (uint64_t)-128);
			assert_int_equal(ips[1], 0xffffffff81000010ull);
			assert_int_equal(ips[3], 0x401000);
			assert_int_equal(k->sample->regs_abi, 2);
			assert_int_equal(k->sample->regs_mask, 0x1c0);
			assert_int_equal(k->sample->n_regs, 3);
			assert_int_equal(k->sample->regs[2], 0x401234);
			assert_int_equal(k->sample->stack.len, 300);
			assert_int_equal(k->sample->stack.data[299], (uint8_t)(299 * 7));
			assert_int_equal(k->sample->stack_dyn_size, 8192);
			break;
		case PERFREC__PACKET__DATA_UNWIND:
			assert_string_equal(k->unwind->path, "/usr/bin/app");
			assert_int_equal(k->unwind->n_sections, 2);
			assert_int_equal(k->unwind->sections[0]->offset, 0x40);
			assert_int_equal(k->unwind->sections[0]->size, 0x80);
			assert_int_equal(k->unwind->sections[0]->data.data[0], 0x14);
			assert_int_equal(k->unwind->sections[1]->kind,
					 PERFREC__UNWIND_SECTION__KIND__EH_FRAME_HDR);
			assert_int_equal(k->unwind->load_vaddrs[0], 0x400000);
			break;
		case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
			assert_int_equal(p.time, t0 + 90);
			assert_true(k->context_switch->out);
			assert_true(k->context_switch->preempt);
			assert_int_equal(k->context_switch->other_tid, 8);
			break;
		case PERFREC__PACKET__DATA_TASK:
			assert_int_equal(p.time, t0 + 200);
			assert_string_equal(prec_frame_string(p.frame, k->task->comm), "worker");
			assert_true(k->task->exec);
			break;
		case PERFREC__PACKET__DATA_MMAP:
			assert_string_equal(prec_frame_string(p.frame, k->mmap->filename), "/usr/bin/app");
			assert_int_equal(k->mmap->build_id.len, 20);
			assert_int_equal(k->mmap->build_id.data[1], 0xcd);
			break;
		case PERFREC__PACKET__DATA_LOSS:
			assert_int_equal(p.time, t0 + 300);   /* inherited */
			assert_int_equal(k->loss->count, 77);
			assert_string_equal(k->loss->reason, "ring full");
			break;
		case PERFREC__PACKET__DATA_THROTTLE:
			assert_true(k->throttle->throttled);
			assert_int_equal(p.time, t0 + 400);
			break;
		case PERFREC__PACKET__DATA_GROUP:
			assert_int_equal(p.stream, 0);
			assert_int_equal(k->group->pid, 42);
			assert_int_equal(k->group->cpu, -1);
			assert_int_equal(k->group->read->lost[1], 3);
			assert_true(k->group->final);
			break;
		case PERFREC__PACKET__DATA_RAW:
			assert_int_equal(k->raw->type, 99);
			assert_int_equal(k->raw->data.len, 3);
			break;
		case PERFREC__PACKET__DATA_SYMBOLS:
			assert_string_equal(k->symbols->path, "/usr/bin/app");
			assert_string_equal(prec_frame_string(p.frame, k->symbols->names[0]), "main");
			assert_string_equal(prec_frame_string(p.frame, k->symbols->names[1]), "helper");
			assert_int_equal(k->symbols->starts[1], 0x20);
			break;
		case PERFREC__PACKET__DATA_SESSION_END:
			assert_int_equal(k->session_end->lost, 77);
			assert_int_equal(k->session_end->cpus[0]->lost, 77);
			assert_string_equal(k->session_end->stop_reason, "signal");
			assert_int_equal(p.time, t0 + 700);
			break;
		case PERFREC__PACKET__DATA_INTERNED:
			interned++;
			break;
		default:
			fail_msg("unexpected kind %d", k->data_case);
		}
	}
	assert_int_equal(ret, 0);
	for (int k = PERFREC__PACKET__DATA_HEADER; k <= PERFREC__PACKET__DATA_UNWIND; k++) {
		if (k != PERFREC__PACKET__DATA_INTERNED)
			assert_int_equal(seen[k], 1);
	}
	/* stream 1: one InternedData for the callchain, one for "worker", one
	 * for "/usr/bin/app"; stream 0: one for the two symbol names */
	assert_int_equal(interned, 4);

	struct prec_reader_stats st;
	prec_reader_stats(r, &st);
	assert_int_equal(st.frames, 2);
	assert_int_equal(st.packets, (uint64_t)n);
	assert_int_equal(st.damaged_frames, 0);
	assert_int_equal(st.unknown_packets, 0);
	assert_true(st.index_present);
	assert_false(st.torn);
	assert_int_equal(st.version_major, 1);
	assert_int_equal(st.version_minor, PREC_VERSION_MINOR);
	prec_reader_free(r);
	free(buf);
}

/* The same file through an fd (pread source) reads the same. */
static void test_fd_source(void **state)
{
	size_t len;
	unsigned char *buf = write_all_kinds(&len);
	char path[] = "/tmp/prec_rt_XXXXXX";
	int fd = mkstemp(path);
	struct prec_reader_stats st;
	struct prec_reader *r;
	struct prec_packet p;
	int n = 0, ret;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	r = prec_reader_open(path, NULL);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0)
		n++;
	assert_int_equal(ret, 0);
	prec_reader_stats(r, &st);
	assert_int_equal(n, 19);   /* 15 kinds + 4 InternedData */
	assert_int_equal(st.file_size, len);
	prec_reader_free(r);
	unlink(path);
	free(buf);
}

/* Unknown packet kinds (a newer writer's oneof member) are skipped and
 * counted; the time they carry still advances the frame's clock. */
static void test_unknown_kind(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	Perfrec__Packet pkt, unk = PERFREC__PACKET__INIT;
	Perfrec__Sample s;
	struct prec_reader_stats st;
	struct fmt_damage_log log = { 0 };
	const void *data;
	size_t len;
	(void)state;

	fmt_sample(&pkt, &s, 0, 1, 2, 0);
	assert_int_equal(prec_writer_append(w, 3, &pkt, 50), 0);
	assert_int_equal(prec_writer_append(w, 3, &unk, 70), 0);   /* NOT_SET */
	assert_int_equal(prec_writer_append(w, 3, &pkt, 0), 0);
	assert_int_equal(prec_writer_close(w), 0);
	data = prec_sink_mem_data(sink, &len);
	assert_int_equal(fmt_count(data, len, &log, &st), 2);
	assert_int_equal(st.unknown_packets, 1);
	assert_int_equal(st.packets, 2);
	assert_int_equal(log.n, 0);

	struct prec_reader *r = prec_reader_open_mem(data, len, NULL);
	struct prec_packet p;
	assert_int_equal(prec_reader_next_packet(r, &p), 1);
	assert_int_equal(p.time, 50);
	assert_int_equal(p.stream, 3);
	assert_int_equal(prec_reader_next_packet(r, &p), 1);
	assert_int_equal(p.time, 70);
	assert_int_equal(prec_reader_next_packet(r, &p), 0);
	prec_reader_free(r);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* A packet over the 16 MiB limit is refused without failing the writer
 * or shifting the next packet's time; after close, calls say "closed". */
static void test_too_big_and_closed(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	Perfrec__Packet pkt;
	Perfrec__Sample s;
	size_t big = 17u << 20;
	uint8_t *raw = calloc(1, big);
	(void)state;

	fmt_sample(&pkt, &s, 0, 1, 2, 0);
	assert_int_equal(prec_writer_append(w, 1, &pkt, 100), 0);
	s.raw.len = big;
	s.raw.data = raw;
	assert_int_equal(prec_writer_append(w, 1, &pkt, 5000), PREC_E_TOO_BIG);
	assert_int_equal(prec_writer_error(w), 0);
	s.raw.len = 0;
	assert_int_equal(prec_writer_append(w, 1, &pkt, 200), 0);
	assert_int_equal(prec_writer_close(w), 0);
	assert_int_equal(prec_writer_append(w, 1, &pkt, 300), PREC_E_CLOSED);
	assert_int_equal(prec_writer_flush(w), PREC_E_CLOSED);

	size_t len;
	const void *data = prec_sink_mem_data(sink, &len);
	struct prec_reader *r = prec_reader_open_mem(data, len, NULL);
	struct prec_packet p;
	assert_int_equal(prec_reader_next_packet(r, &p), 1);
	assert_int_equal(p.time, 100);
	assert_int_equal(prec_reader_next_packet(r, &p), 1);
	assert_int_equal(p.time, 200);
	assert_int_equal(prec_reader_next_packet(r, &p), 0);
	prec_reader_free(r);
	prec_writer_free(w);
	prec_sink_free(sink);
	free(raw);
}

/* An intern call that cannot give an iid fails the writer with a reason,
 * so callers never have to invent one (writer.h). */
static void test_intern_failures(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	uint64_t ip = 1;

	(void)state;
	assert_int_equal(prec_writer_error(w), 0);
	assert_true(prec_writer_intern_string(w, 1, "ok") > 0);
	assert_int_equal(prec_writer_intern_string(w, 1u << 20, "x"), 0);
	assert_int_equal(prec_writer_error(w), -EINVAL);
	/* sticky: the first reason stays, every later call fails */
	assert_int_equal(prec_writer_intern_callchain(w, 1, &ip, 1), 0);
	assert_int_equal(prec_writer_error(w), -EINVAL);
	prec_writer_free(w);

	w = prec_writer_new(sink, NULL);
	assert_int_equal(prec_writer_intern_callchain(w, 1, NULL, 3), 0);
	assert_int_equal(prec_writer_error(w), -EINVAL);
	prec_writer_free(w);

	w = prec_writer_new(sink, NULL);
	assert_int_equal(prec_writer_intern_callchain(w, 1, &ip, (size_t)1 << 40), 0);
	assert_int_equal(prec_writer_error(w), PREC_E_TOO_BIG);
	prec_writer_free(w);

	w = prec_writer_new(sink, NULL);
	assert_int_equal(prec_writer_close(w), 0);
	assert_int_equal(prec_writer_intern_string(w, 1, "late"), 0);
	assert_int_equal(prec_writer_error(w), PREC_E_CLOSED);
	prec_writer_free(w);
	prec_sink_free(sink);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_fd_source),
		cmocka_unit_test(test_unknown_kind),
		cmocka_unit_test(test_too_big_and_closed),
		cmocka_unit_test(test_intern_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
