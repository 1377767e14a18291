#!/usr/bin/env bash
# test_pkgconfig.sh - `cmake --install` into a temp prefix, then a program
# outside the tree finds the format library with `pkg-config --cflags
# --libs prec-format`, writes a .prec file and reads it back; the unit and
# the binaries are installed too (the unit names the installed binary).
set -euo pipefail
build=${PERFREC_BUILD_DIR:?}
d=$(mktemp -d /tmp/perfrec-install-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "test_pkgconfig: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$d/usr" > "$d/install.log" || fail "install: $(cat "$d/install.log")"
pc=$(find "$d/usr" -name prec-format.pc)
[ -n "$pc" ] || fail "no prec-format.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs prec-format) || fail "pkg-config --cflags --libs prec-format"
echo "pkg-config: $flags"

cat > "$d/t.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "format/error.h"
#include "format/reader.h"
#include "format/writer.h"

int main(void)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Sample s = PERFREC__SAMPLE__INIT;
	struct prec_packet got;
	const void *buf;
	size_t len;
	int n = 0;

	s.ip = 0x1234;
	p.data_case = PERFREC__PACKET__DATA_SAMPLE;
	p.sample = &s;
	for (int i = 0; i < 3; i++)
		if (prec_writer_append(w, 1, &p, 1000 + i) < 0)
			return 1;
	if (prec_writer_close(w) < 0)
		return 1;
	buf = prec_sink_mem_data(sink, &len);
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	while (r && prec_reader_next_packet(r, &got) > 0)
		n += got.pkt->data_case == PERFREC__PACKET__DATA_SAMPLE && got.pkt->sample->ip == 0x1234;
	printf("%d samples read back (%s)\n", n, prec_strerror(0));
	prec_reader_free(r);
	prec_writer_free(w);
	prec_sink_free(sink);
	return n == 3 ? 0 : 1;
}
C
extra=
grep -q '^PERFREC_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" && extra="-fsanitize=address,undefined"
grep -q '^PERFREC_FUZZ:BOOL=ON' "$build/CMakeCache.txt" && extra="-fsanitize=address,undefined"
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
# shellcheck disable=SC2086
"${cc:-cc}" -std=c11 -Wall -Werror $extra -o "$d/t" "$d/t.c" $flags || fail "compile against the installed library"
"$d/t" || fail "the program did not read its file back"

grep -q "^ExecStart=$d/usr/bin/perfrec daemon" "$d"/usr/lib/systemd/system/perfrec.service 2>/dev/null ||
  [ ! -d "$build/recorder" ] || fail "the unit does not name the installed perfrec"
[ -x "$d/usr/bin/perfrec-analyze" ] || fail "perfrec-analyze not installed"
echo "test_pkgconfig: ok"
