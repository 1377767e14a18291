/*
 * debuginfod.c - libdebuginfod's client, when the build has it (see
 * debuginfod.h); otherwise the same interface, never enabled.
 */
#include "analyzer/symbols/debuginfod.h"

#include <errno.h>
#include <stdlib.h>

#ifdef ANA_HAVE_DEBUGINFOD

#include <elfutils/debuginfod.h>
#include <unistd.h>

static debuginfod_client *client;

int ana_debuginfod_enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls;
}

int ana_debuginfod_find(const uint8_t *bid, size_t len, char **path)
{
	int fd;

	*path = NULL;
	if (!ana_debuginfod_enabled())
		return -ENOSYS;
	if (!len || len > 64)
		return -EINVAL;
	if (!client && !(client = debuginfod_begin()))
		return -ENOMEM;
	fd = debuginfod_find_debuginfo(client, bid, (int)len, path);
	if (fd < 0)
		return fd;
	close(fd);   /* the symbolizer reads the file by its path */
	return *path ? 0 : -ENOENT;
}

void ana_debuginfod_release(void)
{
	if (client)
		debuginfod_end(client);
	client = NULL;
}

#else

int ana_debuginfod_enabled(void)
{
	return 0;
}

int ana_debuginfod_find(const uint8_t *bid, size_t len, char **path)
{
	(void)bid;
	(void)len;
	*path = NULL;
	return -ENOSYS;
}

void ana_debuginfod_release(void)
{
}

#endif
