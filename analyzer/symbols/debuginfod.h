/*
 * debuginfod.h - separate debug files by build-id from debuginfod servers.
 *
 * Why: a trace of a stripped program names its functions only by their
 * unwind ranges (object+0xSTART); the debug file a build system published
 * to a debuginfod server names them. The servers are the ones
 * DEBUGINFOD_URLS lists (as gdb and perf use them); files are fetched
 * through libdebuginfod, which caches them under DEBUGINFOD_CACHE_PATH
 * (default ~/.cache/debuginfod_client), misses included, so a second
 * report asks no server. libdebuginfod is optional at build time
 * (ANA_HAVE_DEBUGINFOD, set by CMake when it is found): without it, or
 * with DEBUGINFOD_URLS unset, nothing is asked.
 *
 *   if (ana_debuginfod_enabled())
 *       per object: fd = ana_debuginfod_find(bid, len, &path);
 *   ...
 *   ana_debuginfod_release();   // once, at the end
 *
 * Not thread-safe: the symbolizer calls it from ana_symbols_finish(),
 * before any resolve. Errors are negative errno; nothing is printed.
 */
#ifndef ANA_DEBUGINFOD_H
#define ANA_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

/* 1 when built with libdebuginfod and DEBUGINFOD_URLS names a server. */
int ana_debuginfod_enabled(void);

/* The debug file of build-id bid: 0 and *path (malloc'd, the caller
 * frees; a file in the client's cache), -ENOENT when no server has it,
 * -ENOSYS when not enabled, other -errno. */
int ana_debuginfod_find(const uint8_t *bid, size_t len, char **path);

/* Frees the client (NULL-safe to call when none was made). */
void ana_debuginfod_release(void);

#endif
