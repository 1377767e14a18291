/*
 * info.h - what a trace is (`perfrec-analyze info`): first a summary
 * (host, wall-clock start, duration, what was recorded, how it stopped,
 * losses and damage only when there are any) and the processes with the
 * most samples; then the detail: host, recording, events and groups,
 * packet counts, losses, frames and bytes, damage, notes.
 * Everything but the top processes comes from pass 1 (struct
 * ana_trace); they take one pass over the sample frames (a trace
 * opened with the samples deferred counts them in that pass).
 */
#ifndef ANA_INFO_H
#define ANA_INFO_H

#include "analyzer/render/table.h"

struct ana_trace;

/* Sections "summary", "top" (the top processes, at most `top` rows; none
 * when top is 0), "info", "events", "groups", "packets", "losses",
 * "damage", "notes" (the last ones only when non-empty). */
int ana_info_run(struct ana_trace *s, size_t top, struct ana_doc *doc);

#endif
