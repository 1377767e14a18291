/*
 * info.h - what a trace is (`perfrec-analyze info`): host, recording,
 * events and groups, packet counts, losses, frames and bytes, damage.
 * Everything comes from pass 1 (struct ana_session); no second pass.
 */
#ifndef ANA_INFO_H
#define ANA_INFO_H

#include "analyzer/table.h"

struct ana_session;

/* Sections "info", "events", "groups", "packets", "losses", "damage",
 * "notes" (the last ones only when non-empty). */
int ana_info_run(struct ana_session *s, struct ana_doc *doc);

#endif
