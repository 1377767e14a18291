/*
 * fuzz_manifest.c - a session manifest (recorder/daemon/manifest.h) as the
 * daemon and a session process read it: the state directory is root's,
 * but a garbled or crafted file must never crash either or make a file
 * not named from its stem deletable. Never a crash; an accepted manifest
 * has a valid name, absolute paths each named STEM.<...>, and encodes
 * again (rec_manifest_save) to a manifest that decodes to the same list.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/daemon/manifest.h"
#include "recorder/net/wire.h"

static int dirfd_once(void)
{
	static int fd = -1;
	char tmpl[] = "/tmp/fuzz-manifest-XXXXXX";

	if (fd < 0 && mkdtemp(tmpl))
		fd = open(tmpl, O_RDONLY | O_DIRECTORY);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_manifest m, again;
	int dfd;

	if (rec_manifest_decode(data, size, &m) < 0)
		return 0;
	if (!rec_wire_name_ok(m.name))
		abort();
	for (size_t i = 0; i < m.n; i++)
		if (m.files[i].path[0] != '/' || m.files[i].stem[0] != '/' ||
		    !rec_manifest_of_stem(m.files[i].path, m.files[i].stem))
			abort();
	dfd = dirfd_once();
	if (dfd >= 0 && rec_manifest_save(dfd, &m) == 0) {
		if (rec_manifest_load(dfd, m.name, &again) != 0 || again.n != m.n ||
		    again.owner_uid != m.owner_uid)
			abort();
		for (size_t i = 0; i < m.n; i++)
			if (strcmp(again.files[i].path, m.files[i].path) ||
			    strcmp(again.files[i].stem, m.files[i].stem) ||
			    again.files[i].dev != m.files[i].dev ||
			    again.files[i].ino != m.files[i].ino)
				abort();
		rec_manifest_release(&again);
		{
			char f[128];

			snprintf(f, sizeof(f), "%s" REC_MANIFEST_SUFFIX, m.name);
			unlinkat(dfd, f, 0);
		}
	}
	rec_manifest_release(&m);
	return 0;
}
