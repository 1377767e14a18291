/*
 * ustack.h - the user part of a sample's callchain from its copied user
 * stack (Sample.regs + Sample.stack, `--call-graph dwarf`), unwound with
 * the DWARF CFI the trace carries (UnwindTable packets) by format/unwind.
 *
 * The trace must have been opened with symbols (the symbolizer owns the
 * unwind tables and the address spaces that place them). The architecture
 * is the trace's (FileHeader.machine; x86_64 when the header is missing).
 *
 * Counting: every call adds to s->ustack (samples with a stack, frames
 * found, how each unwind stopped), which the reports show.
 */
#ifndef ANA_USTACK_H
#define ANA_USTACK_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

struct ana_trace;

/* True when the sample carries user registers and stack bytes. */
int ana_ustack_present(const Perfrec__Sample *smp);

/* Unwinds the sample's user stack into ips[0..max): the user pc first,
 * then return addresses. Returns the count (0 when the sample carries no
 * stack or the registers are of another architecture). */
int ana_ustack_unwind(struct ana_trace *s, const struct prec_packet *p,
		      uint64_t *ips, size_t max);

#endif
