/*
 * fuzz_ctl_request.c - what a local client sends the daemon's control
 * socket (untrusted: group members, anything that can connect): the bytes
 * are framed as the daemon frames them (net/wire.h, at most
 * REC_CTL_MAX_MSG a message, fed in pieces) and each message decoded by
 * rec_ctl_request_decode(). Never a crash; a refusal always says why; an
 * accepted request has a body, our version, no unknown field, and packs
 * and decodes again to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/daemon/ctlmsg.h"
#include "recorder/net/wire.h"

static void check_one(const unsigned char *m, size_t n)
{
	Perfrec__Control__Request *rq, *again;
	unsigned char *b, *b2;
	char why[256] = "";
	size_t len, len2;

	rq = rec_ctl_request_decode(m, n, why, sizeof(why));
	if (!rq) {
		if (!why[0])
			abort();   /* a refusal without a reason */
		return;
	}
	if (rq->version != REC_CTL_VERSION ||
	    rq->body_case == PERFREC__CONTROL__REQUEST__BODY__NOT_SET ||
	    rec_ctl_unknown_field(&rq->base, NULL, NULL) || !strcmp(rec_ctl_request_name(rq), "none"))
		abort();
	if (rec_ctl_pack(&rq->base, SIZE_MAX, &b, &len) == 0) {
		again = rec_ctl_request_decode(b + 4, len - 4, why, sizeof(why));
		if (!again)
			abort();
		if (rec_ctl_pack(&again->base, SIZE_MAX, &b2, &len2) == 0) {
			if (len2 != len || memcmp(b, b2, len))
				abort();
			free(b2);
		}
		rec_ctl_request_free(again);
		free(b);
	}
	rec_ctl_request_free(rq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prec_msgbuf in;
	size_t pos = 0, step = size ? 1 + data[0] % 61 : 1;
	const unsigned char *m;
	size_t n;
	int ret = 0;

	/* the whole input as one message */
	check_one(data, size);
	/* and as a stream, in pieces of a size the input chooses */
	prec_msgbuf_init(&in, REC_CTL_MAX_MSG);
	while (pos < size && ret >= 0) {
		size_t room, k;
		void *p = prec_msgbuf_space(&in, &room);

		if (!p)
			break;
		k = size - pos < step ? size - pos : step;
		k = k < room ? k : room;
		memcpy(p, data + pos, k);
		prec_msgbuf_commit(&in, k);
		pos += k;
		while ((ret = prec_msgbuf_next(&in, &m, &n)) > 0)
			check_one(m, n);
	}
	prec_msgbuf_release(&in);
	return 0;
}
