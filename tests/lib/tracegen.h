/*
 * tracegen.h - a small deterministic trace for golden tests.
 *
 * The same bytes on every run and machine: a two-CPU recording of 70 ms in
 * which three tasks play a fixed schedule, sampled every millisecond with
 * callchains, with a counting group, a loss record and symbol tables. The
 * expected analyzer outputs under tests/golden/ are computed by hand from
 * the timeline documented in tracegen.c (see tests/golden/README.md).
 *
 * Streams: 0 = metadata and counter snapshots, 1 + cpu = that CPU's
 * records; task events sit in the CPU streams, as perfrec 1.0 wrote them.
 * With by_kind, the CPU streams' packets go by kind instead, as perfrec
 * writes them since format 1.1: 1 = samples, 2 = context switches and
 * off-CPU intervals, 3 = tasks, maps, losses and the other side-band
 * records (stream 0 stays as it is).
 */
#ifndef TRACEGEN_H
#define TRACEGEN_H

#include <stddef.h>
#include <stdint.h>

struct tracegen_opts {
	size_t frame_size;   /* packet bytes per frame (small = many frames);
			      * 0 = no size cuts. Frames are always cut at
			      * every 10 ms of the timeline, so the default
			      * layout does not depend on encoded sizes. */
	int write_index;     /* 0 = leave the trailing index out */
	int repeat;          /* copies of the 70 ms timeline, each shifted by
			      * 100 ms (1 = the golden trace; more for load) */
	int hostile;         /* names made of markup (below), for escaping
			      * tests: same timeline, other strings */
	int offcpu;          /* add record --off-cpu and --filter data (the
			      * list in tracegen.c): same timeline */
	int by_kind;         /* streams by kind (above): same packets */
	int skew_reads;      /* CPU0's counter reads 1 ms before CPU1's (the
			      * same values): an instance's last read is
			      * not the event's last */
	/* 1..99: instead of the timeline, a known split for diff tests:
	 * split_samples cpu-clock samples (0 = 100) of pid 100 on CPU0,
	 * one per ms, with period split_period (0 = 1000000); the first
	 * split% at ping+0x10 <- main+0x20, the rest at pong+0x10 <-
	 * main+0x40. Same header, events and symbols. */
	int split;
	int split_samples;
	unsigned long long split_period;
	/* For datasets (many files, several hosts): */
	const char *host;    /* FileHeader.hostname; NULL = "golden-host" */
	uint64_t offset_ns;  /* every time later by this much (the header's
			      * start_time too; its clock reference stays, so
			      * the wall-clock start moves with it) */
	int rotated;         /* end as a rotated file: stop reason "rotated"
			      * at start + repeat * 100 ms, where the next
			      * file (offset_ns + repeat * 100 ms) starts */
};

#define TRACEGEN_OPTS_INIT { .write_index = 1, .repeat = 1 }

/* With hostile: the symbol "ping", the comm "bash", the host name, the
 * event "page-faults" and the object path "/usr/bin/pingpong" become: */
#define TRACEGEN_HOSTILE_SYM "</script><img src=x onerror=alert(1)>"
#define TRACEGEN_HOSTILE_COMM "\"><svg onload=alert(2)>"
#define TRACEGEN_HOSTILE_HOST "<b>host</b>&amp;"
#define TRACEGEN_HOSTILE_EVENT "<script>alert(3)</script>"
#define TRACEGEN_HOSTILE_PATH "/usr/bin/<iframe src=x>'"
/* ... and the symbol and comm "pong", the kernel version, the note and
 * the recorder version get control characters for a terminal: a screen
 * clear and a window title (ESC), a forged line (CR, LF), 8-bit CSI and
 * CSI as UTF-8 C1, bytes that are not UTF-8, DEL, a backspace and a tab. */
#define TRACEGEN_HOSTILE_CTRL "\x1b[2J\x1b]0;owned\x07pong\r\nforged line \x9b" \
	"31m\xc2\x9b" "1m\xff\xc0\xaf\x7f\b\tend"

/* Writes the trace to path. 0 or a negative errno / PREC_E_* code. */
int tracegen_write(const char *path, const struct tracegen_opts *o);

/* Trace start, CLOCK_MONOTONIC ns (the header's start_time). */
#define TRACEGEN_START_NS 1000000000ull

#endif
