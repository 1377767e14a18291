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
struct ana_dataset;

/* A dataset's listing (`info DIR` or several files), from the files'
 * probes alone (no frame of samples is read): section "dataset" (files,
 * hosts, sessions, bytes, skipped and duplicate files), "sessions" (per
 * host and session: wall-clock start in UTC, duration, files, bytes,
 * samples and losses from the files' SessionEnd, state: whole when every
 * file is, else open or torn as the worst one is), "files" and "events"
 * (each event name once). */
int ana_info_dataset(const struct ana_dataset *ds, struct ana_doc *doc);

/* Sections "summary", "top" (the top processes, at most `top` rows; none
 * when top is 0), "info", "events", "groups", "packets", "losses",
 * "damage", "notes" (the last ones only when non-empty). */
int ana_info_run(struct ana_trace *s, size_t top, struct ana_doc *doc);

#endif
