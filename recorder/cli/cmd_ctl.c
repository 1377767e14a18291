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
	{ "output", 'o', "FILE", "snapshot: the file to write (a name in the\n"
	  "daemon's output directory; root may give a path)" },
	{ "help", 'h', NULL, "this text" },
	{ NULL, 0, NULL, NULL },
};

static const char ctl_usage[] =
	"usage: perfrec ctl [--socket PATH] [--json] [--timeout TIME] COMMAND\n"
	"  start NAME [record options...]  start a session (see 'perfrec ctl start --help')\n"
	"  stop NAME                       stop it: its files are finished with their index\n"
	"  status [NAME]                   state, counts per CPU, bytes, files, restarts\n"
	"  list                            the sessions and their state\n"
	"  rotate NAME                     finish the current file, go on in a new one\n"
	"  snapshot NAME [-o FILE]         write a flight session's buffer to a file\n"
	"ctl's options go anywhere (ctl status web --json); after start NAME, every\n"
	"word but --socket, --json and --timeout is the session's";
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
	const char *operands;            /* for messages */
	Perfrec__Control__Request__BodyCase body;
};

static const struct cmd cmds[] = {
	{ "start", 1, -1, "NAME [options]", PERFREC__CONTROL__REQUEST__BODY_START },
	{ "stop", 1, 1, "NAME", PERFREC__CONTROL__REQUEST__BODY_STOP },
	{ "status", 0, 1, "[NAME]", PERFREC__CONTROL__REQUEST__BODY_STATUS },
	{ "list", 0, 0, "", PERFREC__CONTROL__REQUEST__BODY_LIST },
	{ "rotate", 1, 1, "NAME", PERFREC__CONTROL__REQUEST__BODY_ROTATE },
	{ "snapshot", 1, 1, "NAME [-o FILE]", PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT },
};

struct ctl_args {
	const char *sock;
	const char *output;              /* snapshot -o */
	bool json;
	uint64_t timeout_ns;
	const struct cmd *cmd;
	char **ops;                      /* the command's operands */
	int nops;
	char **start_args;               /* start: the session's words (malloc'ed
					  * array, words borrowed from argv) */
	size_t n_start_args;
};

/* One of ctl's own options (key, arg). 0, or -EINVAL logged. */
static int ctl_option(struct ctl_args *a, const struct rec_cli_parser *p, int key,
		      const char *arg)
{
	switch (key) {
	case REC_OPT_SOCKET:
		a->sock = arg;
		return 0;
	case REC_OPT_JSON:
		a->json = true;
		return 0;
	case REC_OPT_TIMEOUT:
		if (rec_parse_duration(arg, 1000000000ull, &a->timeout_ns) < 0 ||
		    a->timeout_ns < 1000000 || a->timeout_ns > 86400000000000ull)
			return rec_cli_bad_value(p, arg, "a duration from 1ms to 24h (e.g. 30s)");
		return 0;
	case 'o':
		a->output = arg;
		return 0;
	default:
		return -EINVAL;
	}
}

/* The words after start NAME: ctl's own long options (--socket, --json,
 * --timeout, before any "--") are taken out; the rest is the session's.
 * 0 or -EINVAL logged. */
static int start_words(struct ctl_args *a, const struct rec_cli_parser *p, int argc,
		       char **argv, int from)
{
	static const struct { const char *name; int key; bool value; } own[] = {
		{ "--socket", REC_OPT_SOCKET, true },
		{ "--json", REC_OPT_JSON, false },
		{ "--timeout", REC_OPT_TIMEOUT, true },
	};
	bool dashdash = false;

	a->start_args = calloc((size_t)(argc - from) + 1, sizeof(*a->start_args));
	if (!a->start_args)
		return -ENOMEM;
	for (int i = from; i < argc; i++) {
		size_t k = 0, n;
		const char *val = NULL;

		dashdash = dashdash || !strcmp(argv[i], "--");
		for (; !dashdash && k < sizeof(own) / sizeof(own[0]); k++) {
			n = strlen(own[k].name);
			if (!strncmp(argv[i], own[k].name, n) &&
			    (argv[i][n] == '\0' || (own[k].value && argv[i][n] == '=')))
				break;
		}
		if (dashdash || k == sizeof(own) / sizeof(own[0])) {
			a->start_args[a->n_start_args++] = argv[i];
			continue;
		}
		if (own[k].value) {
			n = strlen(own[k].name);
			if (argv[i][n] == '=') {
				val = argv[i] + n + 1;
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else {
				rec_log(REC_LOG_ERROR, "option '%s' needs a value", own[k].name);
				return -EINVAL;
			}
		}
		if (ctl_option(a, p, own[k].key, val) < 0)
			return -EINVAL;
	}
	return 0;
}

/* argv into *a: options anywhere, the command, its operands. 0; 1: --help
 * was printed; -EINVAL: bad usage (logged, naming the word). */
static int parse_ctl(int argc, char **argv, struct ctl_args *a)
{
	struct rec_cli_parser p;
	const char *arg;
	int key, ret = 0;

	if (rec_cli_parser_init(&p, ctl_opts) < 0)
		return -ENOMEM;
	rec_cli_parser_operands_inline(&p);
	a->ops = calloc((size_t)argc + 1, sizeof(*a->ops));
	if (!a->ops) {
		rec_cli_parser_release(&p);
		return -ENOMEM;
	}
	while (!ret && (key = rec_cli_next(&p, argc, argv, &arg)) != 0) {
		if (key < 0) {
			ret = -EINVAL;
		} else if (key == 'h') {
			if (a->cmd && a->cmd->body == PERFREC__CONTROL__REQUEST__BODY_START)
				rec_cli_session_help(stdout);
			else
				rec_cli_help(stdout, ctl_usage, ctl_about, ctl_opts, NULL);
			ret = 1;
		} else if (key != REC_CLI_OPERAND) {
			ret = ctl_option(a, &p, key, arg) < 0 ? -EINVAL : 0;
		} else if (!a->cmd) {
			for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
				if (!strcmp(cmds[i].name, arg))
					a->cmd = &cmds[i];
			if (!a->cmd) {
				rec_log(REC_LOG_ERROR, "unknown command '%s' (start, stop, status, "
					"list, rotate, snapshot)", arg);
				ret = -EINVAL;
			}
		} else {
			a->ops[a->nops++] = (char *)arg;
			/* start NAME: the rest is the session's (record's options
			 * are not ctl's) */
			if (a->cmd->body == PERFREC__CONTROL__REQUEST__BODY_START) {
				int from = p.optind;

				if (from < argc && (!strcmp(argv[from], "--help") ||
						    !strcmp(argv[from], "-h"))) {
					rec_cli_session_help(stdout);
					ret = 1;
				} else {
					ret = start_words(a, &p, argc, argv, from);
				}
				goto out;
			}
		}
	}
	for (int i = p.optind; !ret && i < argc && i > 0; i++)   /* after "--" */
		a->ops[a->nops++] = argv[i];
	if (ret)
		goto out;
	if (!a->cmd) {
		rec_log(REC_LOG_ERROR, "which command? start, stop, status, list, rotate, snapshot");
		ret = -EINVAL;
	} else if (a->nops < a->cmd->min) {
		rec_log(REC_LOG_ERROR, "%s: which session? (%s %s)", a->cmd->name, a->cmd->name,
			a->cmd->operands);
		ret = -EINVAL;
	} else if (a->cmd->max >= 0 && a->nops > a->cmd->max) {
		rec_log(REC_LOG_ERROR, "%s: unexpected argument '%s' (%s %s)", a->cmd->name,
			a->ops[a->cmd->max], a->cmd->name, a->cmd->operands);
		ret = -EINVAL;
	} else if (a->output && a->cmd->body != PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT) {
		rec_log(REC_LOG_ERROR, "%s: -o is snapshot's (snapshot NAME -o FILE)",
			a->cmd->name);
		ret = -EINVAL;
	}
out:
	rec_cli_parser_release(&p);
	return ret;
}

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
	struct ctl_args a = { .sock = DEFAULT_SOCKET,
			      .timeout_ns = DEFAULT_TIMEOUT_MS * 1000000ull };
	const struct cmd *c;
	char **ops;
	int ret, code = 2;

	rec_cli_print_install(false);
	ret = parse_ctl(argc, argv, &a);
	if (ret == 1) {
		code = 0;
		goto out;
	}
	if (ret == -ENOMEM) {
		code = 1;
		goto out;
	}
	if (ret < 0)
		goto usage;
	c = a.cmd;
	ops = a.ops;
	rq.version = REC_CTL_VERSION;
	rq.body_case = c->body;
	switch (c->body) {
	case PERFREC__CONTROL__REQUEST__BODY_START:
		start.name = ops[0];
		start.args = a.start_args;
		start.n_args = a.n_start_args;
		rq.start = &start;
		break;
	case PERFREC__CONTROL__REQUEST__BODY_STOP:
		stop.name = ops[0];
		rq.stop = &stop;
		break;
	case PERFREC__CONTROL__REQUEST__BODY_STATUS:
		status.name = a.nops ? ops[0] : (char *)"";
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
		snap.output = a.output ? (char *)a.output : (char *)"";
		rq.snapshot = &snap;
		break;
	}
	code = 1;
	if (rec_ctl_call(a.sock, &rq, (int)(a.timeout_ns / 1000000), &rp) < 0)
		goto out;
	if (a.json) {
		rec_cli_pb_json(stdout, &rp->base, 0);
		printf("\n");
	} else if (!rp->ok) {
		/* the recorder's words, one message a line, as it wrote them */
		fprintf(stderr, "perfrec ctl: %s failed:\n%s\n", c->name, rp->error);
	} else if (c->body == PERFREC__CONTROL__REQUEST__BODY_LIST) {
		print_list(rp);
	} else {
		if (rp->file && rp->file[0])
			printf("%s: %s\n", c->body == PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT ?
			       "written" : "finished", rp->file);
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
	free(a.ops);
	free(a.start_args);
	return code;
}
