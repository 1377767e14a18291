/*
 * cmd_ctl.c - `perfrec ctl`: one request to the daemon
 * (daemon/ctlmsg.h), its reply printed for people or as JSON (--json,
 * from the schema: cli/pbjson.h). Exit status 0 when the daemon did it,
 * 1 when it refused or did not answer, 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/cli/cmd.h"
#include "recorder/cli/parse.h"
#include "recorder/cli/pbjson.h"
#include "recorder/cli/print.h"
#include "recorder/cli/sessargs.h"
#include "recorder/daemon/ctlmsg.h"
#include "recorder/log.h"
#include "recorder/recording/status.h"

#define DEFAULT_SOCKET "/run/perfrec/ctl.sock"
/* start waits for the events to open; stop for files to finish and
 * streams to be acknowledged; snapshot for a buffer to be written */
#define DEFAULT_TIMEOUT_MS 90000

typedef Perfrec__Control__SessionStatus Status;

static const struct rec_cli_opt ctl_opts[] = {
	{ "socket", REC_OPT_SOCKET, "PATH", "the daemon's socket (default " DEFAULT_SOCKET ")" },
	{ "json", REC_OPT_JSON, NULL, "print the reply as JSON (every field of\n"
	  "proto/control.proto's Reply)" },
	{ "timeout", REC_OPT_TIMEOUT, "TIME", "wait this long for the reply (default 90s)" },
	{ "help", 'h', NULL, "this text" },
	{ NULL, 0, NULL, NULL },
};

static const char ctl_usage[] =
	"usage: perfrec ctl [--socket PATH] [--json] COMMAND\n"
	"  start NAME [record options...]  start a session (see 'perfrec ctl start --help')\n"
	"  stop NAME                       stop it: its files are finished with their index\n"
	"  status [NAME]                   state, counts per CPU, bytes, files, restarts\n"
	"  list                            the sessions and their state\n"
	"  rotate NAME                     finish the current file, go on in a new one\n"
	"  snapshot NAME [-o FILE]         write a flight session's buffer to a file";
static const char ctl_about[] =
	"Asks the perfrec daemon to do something and prints its answer; the\n"
	"recorder's own error messages are shown as it wrote them.\n";

/* ---- printing for people */

static const char *state_word(Perfrec__Control__SessionStatus__State st)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
		&perfrec__control__session_status__state__descriptor, (int)st);
	static char low[32];

	if (!v)
		return "?";
	snprintf(low, sizeof(low), "%s", v->name);
	for (char *p = low; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	return low;
}

static void print_join(const char *label, char **v, size_t n)
{
	printf("  %-9s", label);
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", v[i]);
	printf("%s\n", n ? "" : "-");
}

static void print_session(const Status *s)
{
	char b[32], b2[32];

	printf("session %s: %s", s->name, state_word(s->state));
	if (s->pid)
		printf(" (pid %d)", s->pid);
	if (s->uptime_ns && s->state == PERFREC__CONTROL__SESSION_STATUS__STATE__RUNNING)
		printf(", up %.1fs", (double)s->uptime_ns / 1e9);
	printf(", %u restart%s, from %s\n", s->restarts, s->restarts == 1 ? "" : "s",
	       s->origin && s->origin[0] ? s->origin : "?");
	if (s->state == PERFREC__CONTROL__SESSION_STATUS__STATE__BACKOFF)
		printf("  %-9snext attempt in %.1fs\n", "restart", (double)s->restart_in_ns / 1e9);
	print_join("args", s->args, s->n_args);
	if (s->n_events || s->target) {
		print_join("events", s->events, s->n_events);
		printf("  %-9s%s\n", "target", s->target && s->target[0] ? s->target : "-");
	}
	if (s->n_cpus) {
		printf("  %-9s%" PRIu64 " (", "records", s->records);
		for (size_t i = 0; i < s->n_cpus; i++) {
			printf("%scpu%d %" PRIu64, i ? ", " : "", s->cpus[i]->cpu,
			       s->cpus[i]->records);
		}
		printf("), %" PRIu64 " samples, %" PRIu64 " switches\n", s->samples, s->switches);
		printf("  %-9s%" PRIu64 " (", "lost", s->lost);
		for (size_t i = 0; i < s->n_cpus; i++)
			printf("%scpu%d %" PRIu64, i ? ", " : "", s->cpus[i]->cpu, s->cpus[i]->lost);
		printf(")\n");
		rec_status_bytes(s->bytes_written, b, sizeof(b));
		rec_status_bytes(s->bytes_raw, b2, sizeof(b2));
		printf("  %-9s%s (%s of packets, compression %.1fx) in %u output%s\n", "written",
		       b, b2, s->bytes_written ? (double)s->bytes_raw / (double)s->bytes_written : 0.0,
		       s->outputs, s->outputs == 1 ? "" : "s");
	}
	if (s->current_file && s->current_file[0])
		printf("  %-9s%s\n", "file", s->current_file);
	if (s->to && s->to[0])
		printf("  %-9s%s\n", "stream", s->to);
	if (s->flight) {
		rec_status_bytes(s->flight->held_bytes, b, sizeof(b));
		rec_status_bytes(s->flight->size, b2, sizeof(b2));
		printf("  %-9s%s held of %s, %" PRIu64 " frames; %" PRIu64 " oldest frames "
		       "dropped; %u snapshot%s\n", "flight", b, b2, s->flight->frames,
		       s->flight->dropped_frames, s->flight->snapshots,
		       s->flight->snapshots == 1 ? "" : "s");
	}
	if (s->stop_reason && s->stop_reason[0] &&
	    s->state != PERFREC__CONTROL__SESSION_STATUS__STATE__RUNNING)
		printf("  %-9s%s\n", "ended", s->stop_reason);
	if (s->last_error && s->last_error[0])
		printf("  %-9s%s\n", "error", s->last_error);
}

static void print_list(const Perfrec__Control__Reply *rp)
{
	if (!rp->n_sessions) {
		printf("no sessions\n");
		return;
	}
	printf("%-24s %-9s %8s %8s  %s\n", "SESSION", "STATE", "PID", "RESTARTS", "FROM");
	for (size_t i = 0; i < rp->n_sessions; i++) {
		const Status *s = rp->sessions[i];

		printf("%-24s %-9s %8d %8u  %s\n", s->name, state_word(s->state), s->pid,
		       s->restarts, s->origin);
	}
}

/* ---- commands */

struct cmd {
	const char *name;
	int min, max;                    /* operands after the command's name */
	Perfrec__Control__Request__BodyCase body;
};

static const struct cmd cmds[] = {
	{ "start", 1, -1, PERFREC__CONTROL__REQUEST__BODY_START },
	{ "stop", 1, 1, PERFREC__CONTROL__REQUEST__BODY_STOP },
	{ "status", 0, 1, PERFREC__CONTROL__REQUEST__BODY_STATUS },
	{ "list", 0, 0, PERFREC__CONTROL__REQUEST__BODY_LIST },
	{ "rotate", 1, 1, PERFREC__CONTROL__REQUEST__BODY_ROTATE },
	{ "snapshot", 1, 3, PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT },
};

int rec_cli_ctl(int argc, char **argv)
{
	Perfrec__Control__Request rq = PERFREC__CONTROL__REQUEST__INIT;
	Perfrec__Control__StartRequest start = PERFREC__CONTROL__START_REQUEST__INIT;
	Perfrec__Control__StopRequest stop = PERFREC__CONTROL__STOP_REQUEST__INIT;
	Perfrec__Control__StatusRequest status = PERFREC__CONTROL__STATUS_REQUEST__INIT;
	Perfrec__Control__ListRequest list = PERFREC__CONTROL__LIST_REQUEST__INIT;
	Perfrec__Control__RotateRequest rotate = PERFREC__CONTROL__ROTATE_REQUEST__INIT;
	Perfrec__Control__SnapshotRequest snap = PERFREC__CONTROL__SNAPSHOT_REQUEST__INIT;
	Perfrec__Control__Reply *rp = NULL;
	const struct cmd *c = NULL;
	struct rec_cli_parser p;
	const char *arg, *sock = DEFAULT_SOCKET;
	char **ops;
	bool json = false;
	uint64_t timeout_ns = DEFAULT_TIMEOUT_MS * 1000000ull;
	int key, nops, code = 2;

	rec_cli_print_install(false);
	if (rec_cli_parser_init(&p, ctl_opts) < 0)
		return 1;
	while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
		switch (key) {
		case REC_OPT_SOCKET:
			sock = arg;
			break;
		case REC_OPT_JSON:
			json = true;
			break;
		case REC_OPT_TIMEOUT:
			if (rec_parse_duration(arg, 1000000000ull, &timeout_ns) < 0 ||
			    timeout_ns < 1000000 || timeout_ns > 86400000000000ull) {
				rec_cli_bad_value(&p, arg, "a duration from 1ms to 24h (e.g. 30s)");
				goto usage;
			}
			break;
		case 'h':
			rec_cli_help(stdout, ctl_usage, ctl_about, ctl_opts, NULL);
			code = 0;
			goto out;
		default:
			goto usage;
		}
	}
	if (key < 0)
		goto usage;
	if (p.optind >= argc) {
		rec_log(REC_LOG_ERROR, "which command? start, stop, status, list, rotate, snapshot");
		goto usage;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, argv[p.optind]))
			c = &cmds[i];
	if (!c) {
		rec_log(REC_LOG_ERROR, "unknown command '%s'", argv[p.optind]);
		goto usage;
	}
	ops = argv + p.optind + 1;
	nops = argc - p.optind - 1;
	if (c->body == PERFREC__CONTROL__REQUEST__BODY_START && nops >= 1 &&
	    (!strcmp(ops[0], "--help") || !strcmp(ops[0], "-h") ||
	     (nops >= 2 && (!strcmp(ops[1], "--help") || !strcmp(ops[1], "-h"))))) {
		rec_cli_session_help(stdout);
		code = 0;
		goto out;
	}
	if (nops < c->min || (c->max >= 0 && nops > c->max) ||
	    (c->body == PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT && nops != 1 &&
	     (nops != 3 || strcmp(ops[1], "-o")))) {
		rec_log(REC_LOG_ERROR, "%s: wrong arguments", c->name);
		goto usage;
	}
	rq.version = REC_CTL_VERSION;
	rq.body_case = c->body;
	switch (c->body) {
	case PERFREC__CONTROL__REQUEST__BODY_START:
		start.name = ops[0];
		start.args = ops + 1;
		start.n_args = (size_t)nops - 1;
		rq.start = &start;
		break;
	case PERFREC__CONTROL__REQUEST__BODY_STOP:
		stop.name = ops[0];
		rq.stop = &stop;
		break;
	case PERFREC__CONTROL__REQUEST__BODY_STATUS:
		status.name = nops ? ops[0] : (char *)"";
		rq.status = &status;
		break;
	case PERFREC__CONTROL__REQUEST__BODY_LIST:
		rq.list = &list;
		break;
	case PERFREC__CONTROL__REQUEST__BODY_ROTATE:
		rotate.name = ops[0];
		rq.rotate = &rotate;
		break;
	default:
		snap.name = ops[0];
		snap.output = nops == 3 ? ops[2] : (char *)"";
		rq.snapshot = &snap;
		break;
	}
	code = 1;
	if (rec_ctl_call(sock, &rq, (int)(timeout_ns / 1000000), &rp) < 0)
		goto out;
	if (json) {
		rec_cli_pb_json(stdout, &rp->base, 0);
		printf("\n");
	} else if (!rp->ok) {
		/* the recorder's words, one message a line, as it wrote them */
		fprintf(stderr, "perfrec ctl: %s failed:\n%s\n", c->name, rp->error);
	} else if (c->body == PERFREC__CONTROL__REQUEST__BODY_LIST) {
		print_list(rp);
	} else {
		if (rp->file && rp->file[0])
			printf("%s: %s\n", c->body == PERFREC__CONTROL__REQUEST__BODY_ROTATE ?
			       "finished" : "written", rp->file);
		for (size_t i = 0; i < rp->n_sessions; i++)
			print_session(rp->sessions[i]);
		if (!rp->n_sessions && c->body == PERFREC__CONTROL__REQUEST__BODY_STATUS)
			printf("no sessions\n");
	}
	code = rp->ok ? 0 : 1;
	goto out;
usage:
	fprintf(stderr, "perfrec: see 'perfrec ctl --help'\n");
	code = 2;
out:
	if (rp)
		perfrec__control__reply__free_unpacked(rp, NULL);
	rec_cli_parser_release(&p);
	return code;
}
