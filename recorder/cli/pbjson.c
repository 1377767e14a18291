/*
 * pbjson.c - protobuf-c messages as JSON; see pbjson.h.
 */
#include "recorder/cli/pbjson.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "format/strescape.h"

/* A daemon's strings are untrusted: controls (C0, DEL, C1) as \u
 * escapes, a byte that is not UTF-8 as U+FFFD (format/strescape.h). */
static void json_string(FILE *f, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char ch = (unsigned char)s[i];
		uint32_t cp;
		size_t k = prec_utf8_char(s + i, n - i, &cp);

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (!k)
			fputs("\\ufffd", f);
		else if (prec_is_control(cp))
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(s + i, 1, k, f);
		i += k ? k : 1;
	}
	fputc('"', f);
}

/* One value of field fd at p. */
static void json_value(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p,
		       int indent)
{
	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		fprintf(f, "%" PRId32, *(const int32_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		fprintf(f, "%" PRIu32, *(const uint32_t *)p);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		fprintf(f, "%" PRId64, *(const int64_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		fprintf(f, "%" PRIu64, *(const uint64_t *)p);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		fprintf(f, "%g", (double)*(const float *)p);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		fprintf(f, "%g", *(const double *)p);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		fputs(*(const protobuf_c_boolean *)p ? "true" : "false", f);
		break;
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
			fd->descriptor, *(const int *)p);

		if (v)
			json_string(f, v->name);
		else
			fprintf(f, "%d", *(const int *)p);
		break;
	}
	case PROTOBUF_C_TYPE_STRING:
		json_string(f, *(char *const *)p);
		break;
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *b = p;

		fputc('"', f);
		for (size_t i = 0; i < b->len; i++)
			fprintf(f, "%02x", b->data[i]);
		fputc('"', f);
		break;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *m = *(const ProtobufCMessage *const *)p;

		if (m)
			rec_cli_pb_json(f, m, indent);
		else
			fputs("null", f);
		break;
	}
	}
}

static size_t value_size(const ProtobufCFieldDescriptor *fd)
{
	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_ENUM:
		return sizeof(int);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	default:
		return 4;
	}
}

void rec_cli_pb_json(FILE *f, const ProtobufCMessage *m, int indent)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const char *base = (const char *)m;
	bool first = true;

	fputs("{", f);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *fd = &d->fields[i];

		if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t which;

			memcpy(&which, base + fd->quantifier_offset, sizeof(which));
			if (which != fd->id)
				continue;
		}
		fprintf(f, "%s\n%*s", first ? "" : ",", 2 * (indent + 1), "");
		first = false;
		json_string(f, fd->name);
		fputs(": ", f);
		if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n;
			const char *arr;

			memcpy(&n, base + fd->quantifier_offset, sizeof(n));
			memcpy(&arr, base + fd->offset, sizeof(arr));
			fputs("[", f);
			for (size_t k = 0; k < n; k++) {
				if (k)
					fputs(", ", f);
				json_value(f, fd, arr + k * value_size(fd), indent + 1);
			}
			fputs("]", f);
		} else {
			json_value(f, fd, base + fd->offset, indent + 1);
		}
	}
	fprintf(f, "%s%*s}", first ? "" : "\n", first ? 0 : 2 * indent, "");
}
