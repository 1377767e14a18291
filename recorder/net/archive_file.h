/*
 * archive.h - the collector's files: DIR/<host>/<session>.prec, each the
 * exact bytes of the file the recorder wrote, appended one whole record
 * (format/record.h) at a time, so the file reads at any moment, and
 * resumed after a restart from what is on disk.
 *
 * How to use (one session):
 *
 *   rec_archive_file_open(dir, host, session, &a);   // create or resume
 *   a.next_seq: the record the file needs next (1 = its header)
 *   for each frame seq == a.next_seq:
 *       rec_archive_file_append(&a, bytes, len);      // one whole record
 *   rec_archive_file_sync(&a);                        // fdatasync: now ack
 *   rec_archive_file_close(&a);
 *
 * An open archive holds an exclusive flock on its file: a second collector
 * cannot write it (-EBUSY), and `collect --list` reports it as open.
 *
 * Resuming counts the records already there (prec_record_recover(),
 * format/record.h): every record in the file was acknowledged once it was
 * synced, so none is ever removed. Only a torn tail (part of one record
 * left by a write a crash interrupted, never acknowledged) is cut, so
 * appends continue a valid file. Damage inside the file (disk faults) is
 * logged with its offset and kept: the damaged frame is lost alone, as
 * readers skip it, and the session resumes after the file's last byte.
 * When damage hides how many records the file holds, resuming could only
 * number the next record wrongly: the open fails (-EUCLEAN, logged with
 * the file, the offset and the fix) and the file is left unchanged.
 */
#ifndef REC_ARCHIVE_FILE_H
#define REC_ARCHIVE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_archive_file {
	int fd;
	char path[4096];
	uint64_t next_seq;     /* seq of the record the file needs next */
	uint64_t synced_seq;   /* last seq made durable */
	uint64_t size;         /* bytes of whole records */
	bool complete;         /* the index (last record) is in */
	uint64_t cut;          /* torn bytes cut off when it was resumed */
	uint64_t damaged;      /* damaged stretches found (and kept) then */
};

/* Creates DIR/host (0750) and the file (0640), or resumes the file.
 * Names must have passed rec_wire_name_ok(). 0, -EBUSY (another process
 * has it open), -EUCLEAN (damage hides the file's record count; nothing
 * changed), or -errno (logged with the path). */
int rec_archive_file_open(const char *dir, const char *host, const char *session,
		     struct rec_archive_file *a);
/* Appends rec, which must be exactly one whole record fit for position
 * next_seq (the header first, nothing after the index): 0, -EBADMSG (not
 * such a record; the file is unchanged), or the disk's -errno (the file is
 * cut back to its last whole record). */
int rec_archive_file_append(struct rec_archive_file *a, const void *rec, size_t len);
/* fdatasync when records were appended since the last sync. 0 or -errno. */
int rec_archive_file_sync(struct rec_archive_file *a);
void rec_archive_file_close(struct rec_archive_file *a);

enum rec_archive_status {
	REC_ARCHIVE_COMPLETE,  /* ends with its index */
	REC_ARCHIVE_OPEN,      /* a collector is writing it now */
	REC_ARCHIVE_TORN,      /* no index: the recording or its stream
				* stopped early (bytes past the last whole
				* record, if any, in torn_bytes) */
	REC_ARCHIVE_DAMAGED,   /* damaged bytes inside (disk faults): readers
				* skip the damaged frames (damaged,
				* damage_offset; complete says whether the
				* index is in) */
};

struct rec_archive_entry {
	char host[80];
	char id[80];
	const char *path;
	uint64_t bytes;
	uint64_t records;
	uint64_t torn_bytes;
	uint64_t start_realtime_ns;   /* wall clock, 0 when unknown */
	uint64_t duration_ns;         /* from the frames' time ranges */
	uint64_t damaged;             /* damaged stretches */
	uint64_t damage_offset;       /* the first one's, when damaged */
	bool complete;                /* ends with its index */
	bool resumable;               /* its record count is known (else a
				       * collector refuses to resume it) */
	enum rec_archive_status status;
};

/* Calls cb for every DIR/<host>/<session>.prec, hosts and sessions in
 * name order; a non-zero return from cb stops and is returned. 0 or
 * -errno (DIR unreadable, logged). */
int rec_archive_list(const char *dir,
		     int (*cb)(const struct rec_archive_entry *e, void *ctx),
		     void *ctx);

const char *rec_archive_status_name(enum rec_archive_status s);

#endif
