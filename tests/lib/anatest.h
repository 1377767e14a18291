/*
 * anatest.h - helpers for the analyzer tests: run perfrec-analyze, capture
 * its output and exit status, read/write whole files, make a scratch dir.
 */
#ifndef ANATEST_H
#define ANATEST_H

#include <stddef.h>

/* Runs PERFREC_ANALYZE_BIN with args (a shell-quoted string) in dir,
 * stdout captured into *out (malloc'd, NUL-terminated), stderr into *err
 * (may be NULL to discard). Returns the exit status, or -1. */
int anatest_run(const char *dir, const char *args, char **out, size_t *len, char **err);

/* Reads a whole file (malloc'd, NUL-terminated); NULL if missing. */
char *anatest_read(const char *path, size_t *len);
int anatest_write(const char *path, const void *buf, size_t len);

/* A fresh scratch directory under $TMPDIR (static buffer). */
const char *anatest_tmpdir(const char *tag);

#endif
