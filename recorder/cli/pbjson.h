/*
 * pbjson.h - any protobuf-c message as JSON, from its descriptor, so a
 * command's --json output follows the schema (proto/ files) without a
 * list of fields kept in step by hand.
 *
 * Every field is written, at its default too (a tool reads the same keys
 * whatever the values); enums by their value names; repeated fields as
 * arrays; a oneof only for the member that is set; bytes as hex.
 */
#ifndef REC_CLI_PBJSON_H
#define REC_CLI_PBJSON_H

#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

/* m as a JSON object, indented by indent levels of two spaces. */
void rec_cli_pb_json(FILE *f, const ProtobufCMessage *m, int indent);

#endif
