/*
 * cmd_daemon.c - `perfrec daemon` (daemon/daemon.h: the control socket
 * and the session supervisor) and `perfrec session`, the process the
 * daemon starts for each session (daemon/session_proc.h); not for people to run.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "recorder/cli/cmd.h"
#include "recorder/cli/parse.h"
#include "recorder/cli/sessargs.h"
#include "recorder/daemon/session_proc.h"
#include "recorder/daemon/config.h"
#include "recorder/daemon/daemon.h"
#include "recorder/daemon/manifest.h"
#include "recorder/daemon/session_run.h"
#include "recorder/log.h"

#define DEFAULT_SOCKET "/run/perfrec/ctl.sock"
#define DEFAULT_CONFIG "/etc/perfrec"
#define DEFAULT_OUTPUT_DIR "/var/lib/perfrec"
#define CHAN_FD 3

/* ---- messages: "perfrec daemon: error: ..." on stderr, or syslog */

static char log_prefix[96] = "perfrec";
static bool log_syslog;

static void print_named(enum rec_log_level level, const char *msg, void *ctx)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

	(void)ctx;
	if (level == REC_LOG_DEBUG)
		return;
	if (log_syslog) {
		syslog(prio[level], "%s", msg);
	} else if (level <= REC_LOG_WARN) {
		fprintf(stderr, "%s: %s: %s\n", log_prefix, rec_log_level_name(level), msg);
	} else {
		fprintf(stderr, "%s: %s\n", log_prefix, msg);
	}
}

static void print_named_install(const char *prefix, bool use_syslog)
{
	snprintf(log_prefix, sizeof(log_prefix), "%s", prefix);
	log_syslog = use_syslog;
	if (use_syslog)
		openlog(log_prefix, LOG_PID, LOG_DAEMON);
	rec_log_set_print(print_named, NULL, NULL);
}

/* ---- perfrec daemon */

struct daemon_ctx {
	const char *output_dir;
	const char *state_dir;      /* OUTPUT_DIR/.manifests */
	bool use_syslog;
	int ready_fd;               /* the waiting parent, or -1 */
};

static const struct rec_cli_opt daemon_opts[] = {
	REC_CLI_SECTION("serving"),
	{ "socket", REC_OPT_SOCKET, "PATH", "control socket (default " DEFAULT_SOCKET ")" },
	{ "config", REC_OPT_CONFIG, "DIR", "daemon.conf and NAME.session files (default\n"
	  DEFAULT_CONFIG ")" },
	{ "output-dir", REC_OPT_OUTPUT_DIR, "DIR", "where sessions write (default " DEFAULT_OUTPUT_DIR
	  "):\nrelative -o names are inside it" },
	{ "foreground", REC_OPT_FOREGROUND, NULL, "stay in the foreground, messages on stderr (as\n"
	  "systemd runs it); else detach once serving (a\nfailure to start is said here) and log to syslog" },
	{ "help", 'h', NULL, "this text" },
	{ NULL, 0, NULL, NULL },
};

static const char daemon_usage[] =
	"usage: perfrec daemon [--socket PATH] [--config DIR] [--output-dir DIR] [--foreground]";
static const char daemon_about[] =
	"Runs recording sessions as a service, controlled with `perfrec ctl`. Each\n"
	"session is a process of its own: one that fails does not disturb the\n"
	"others and is restarted with a growing delay (1 s to 60 s).\n"
	"\n"
	"The socket is 0600 (root only), or 0660 with the group of CONFIG/daemon.conf\n"
	"('group perfrec'), whose members may then use ctl; every client's\n"
	"credentials are checked. One daemon per socket.\n"
	"\n"
	"Sessions in CONFIG/NAME.session (the words of 'perfrec ctl start NAME ...',\n"
	"'#' comments) start with the daemon and restart when the file changes\n"
	"(SIGHUP reads them again too); removing the file stops its session.\n";
static const char daemon_footer[] =
	"SIGTERM or SIGINT stops every session cleanly (files finished with their\n"
	"index), then the daemon. dist/perfrec.service runs it under systemd.\n";

/* STEM of a session's files: -o without ".prec", or NAME; a relative one
 * inside dir. Its directory is resolved (realpath), so one place has one
 * stem however it is written ("./x", "../out/x"): the daemon compares
 * stems to keep sessions' files apart. NULL and errno. */
static char *file_stem(const struct rec_cli_session_args *a, const char *name,
		       const char *dir)
{
	const char *o = a->rec.output_given ? a->rec.c.output : name;
	size_t n = strlen(o);
	char *stem, *slash, real[PATH_MAX];

	if (n > 5 && !strcmp(o + n - 5, ".prec"))
		n -= 5;
	if (o[0] == '/' || !dir)
		stem = strndup(o, n);
	else if (asprintf(&stem, "%s/%.*s", dir, (int)n, o) < 0)
		stem = NULL;
	if (!stem)
		return NULL;
	slash = strrchr(stem, '/');
	if (slash && slash > stem) {
		char *joined;

		*slash = '\0';
		if (realpath(stem, real) &&
		    asprintf(&joined, "%s/%s", strcmp(real, "/") ? real : "", slash + 1) >= 0) {
			free(stem);
			return joined;
		}
		*slash = '/';   /* no such directory: the session says so */
	}
	return stem;
}

/* Does a session with these arguments write files (or snapshots)? */
static bool makes_files(const struct rec_cli_session_args *a)
{
	return !a->rec.to || a->rec.output_given || a->rec.flight_bytes;
}

static int check_session(void *ctx, const char *name, int argc, char **argv, bool trusted,
			 char *stem, size_t stem_len)
{
	struct daemon_ctx *dc = ctx;
	struct rec_cli_session_args a;
	struct rec_evspecs evl = REC_EVSPECS_INIT;
	char **full = calloc((size_t)argc + 2, sizeof(*full));
	int ret;

	stem[0] = '\0';
	if (!full)
		return -ENOMEM;
	full[0] = (char *)"start";
	memcpy(full + 1, argv, (size_t)argc * sizeof(*argv));
	ret = rec_cli_session_parse(argc + 1, full, trusted, &a);
	if (!ret)
		ret = rec_cli_record_events(&a.rec, &evl);
	if (!ret && makes_files(&a)) {
		char *st = file_stem(&a, name, dc->output_dir);

		if (!st || strlen(st) >= stem_len) {
			rec_log(REC_LOG_ERROR, "the output path is too long");
			ret = -ENAMETOOLONG;
		} else {
			memcpy(stem, st, strlen(st) + 1);
		}
		free(st);
	}
	rec_evspecs_release(&evl);
	rec_cli_session_args_release(&a);
	free(full);
	return ret;
}

static char **session_argv(void *ctx, const char *name, int argc, char **argv, bool trusted,
			   uint32_t owner)
{
	struct daemon_ctx *dc = ctx;
	char **v = calloc((size_t)argc + 13, sizeof(*v)), uid[16];
	int n = 0;
	bool ok = v != NULL;

	if (!v)
		return NULL;
	v[n++] = strdup("perfrec");
	v[n++] = strdup("session");
	v[n++] = strdup("--output-dir");
	v[n++] = strdup(dc->output_dir);
	v[n++] = strdup("--state-dir");
	v[n++] = strdup(dc->state_dir);
	snprintf(uid, sizeof(uid), "%u", (unsigned)owner);
	v[n++] = strdup("--owner");
	v[n++] = strdup(uid);
	if (trusted)
		v[n++] = strdup("--trusted");
	if (dc->use_syslog)
		v[n++] = strdup("--syslog");
	v[n++] = strdup(name);
	for (int i = 0; i < argc; i++)
		v[n++] = strdup(argv[i]);
	for (int i = 0; i < n; i++)
		ok = ok && v[i];
	if (!ok) {
		rec_words_free(v);
		return NULL;
	}
	return v;
}

static void on_ready(void *ctx)
{
	struct daemon_ctx *dc = ctx;

	if (dc->ready_fd >= 0) {
		/* serving: from now on messages go to syslog, and stdio points
		 * nowhere (the terminal may close) */
		print_named_install("perfrec-daemon", true);
		if (write(dc->ready_fd, "1", 1) < 0) {
			/* the parent is gone: nobody to tell */
		}
		close(dc->ready_fd);
		dc->ready_fd = -1;
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			close(null);
		}
	}
}

/* Detaches: the parent returns once the child serves (0) or failed (1). */
static int detach(struct daemon_ctx *dc, bool *parent, int *code)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		*parent = true;
		*code = read(p[0], &c, 1) == 1 ? 0 : 1;
		close(p[0]);
		return 0;
	}
	close(p[0]);
	setsid();
	dc->ready_fd = p[1];
	*parent = false;
	return 0;
}

static int make_dir(const char *path, mode_t mode, const char *what)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST) {
		rec_log(REC_LOG_ERROR, "cannot create the %s %s: %s", what, path,
			strerror(errno));
		return -errno;
	}
	return 0;
}

int rec_cli_daemon(int argc, char **argv)
{
	struct rec_daemon_opts o = REC_DAEMON_OPTS_INIT;
	struct daemon_ctx dc = { DEFAULT_OUTPUT_DIR, NULL, false, -1 };
	struct rec_daemon_conf conf;
	struct rec_daemon *d = NULL;
	struct rec_cli_parser p;
	const char *arg, *config = DEFAULT_CONFIG;
	char sockdir[PATH_MAX], outdir[PATH_MAX], statedir[PATH_MAX + 16];
	bool foreground = false, parent = false;
	int key, code = 2;

	print_named_install("perfrec daemon", false);
	o.socket_path = DEFAULT_SOCKET;
	if (rec_cli_parser_init(&p, daemon_opts) < 0)
		return 1;
	while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
		switch (key) {
		case REC_OPT_SOCKET:
			o.socket_path = arg;
			break;
		case REC_OPT_CONFIG:
			config = arg;
			break;
		case REC_OPT_OUTPUT_DIR:
			dc.output_dir = arg;
			break;
		case REC_OPT_FOREGROUND:
			foreground = true;
			break;
		case 'h':
			rec_cli_help(stdout, daemon_usage, daemon_about, daemon_opts, daemon_footer);
			code = 0;
			goto out;
		default:
			goto usage;
		}
	}
	if (key < 0)
		goto usage;
	if (p.optind < argc) {
		rec_log(REC_LOG_ERROR, "unexpected argument '%s'", argv[p.optind]);
		goto usage;
	}
	code = 1;
	if (rec_daemon_conf_read(config, &conf) < 0)
		goto out;
	snprintf(sockdir, sizeof(sockdir), "%s", o.socket_path);
	if (make_dir(dirname(sockdir), 0755, "socket directory") < 0 ||
	    make_dir(dc.output_dir, 0750, "output directory") < 0)
		goto out;
	/* sessions chdir into it: relative names must not depend on ours */
	if (!realpath(dc.output_dir, outdir)) {
		rec_log(REC_LOG_ERROR, "output directory %s: %s", dc.output_dir, strerror(errno));
		goto out;
	}
	dc.output_dir = outdir;
	snprintf(statedir, sizeof(statedir), "%s/%s", outdir, REC_MANIFEST_DIR);
	dc.state_dir = statedir;
	o.state_dir = statedir;
	o.config_dir = config;
	o.group = conf.group[0] ? conf.group : NULL;
	o.check = check_session;
	o.session_argv = session_argv;
	o.ready = on_ready;
	o.ctx = &dc;
	if (!foreground) {
		if (detach(&dc, &parent, &code) < 0) {
			rec_log(REC_LOG_ERROR, "cannot detach: %s", strerror(errno));
			goto out;
		}
		if (parent)
			goto out;   /* code: did the daemon come up? */
		dc.use_syslog = true;   /* sessions log to syslog; we do once serving,
					 * failures before that reach the terminal */
	}
	signal(SIGPIPE, SIG_IGN);
	if (rec_daemon_new(&o, &d) < 0)
		goto out;
	code = rec_daemon_run(d) < 0 ? 1 : 0;
	goto out;
usage:
	fprintf(stderr, "perfrec: see 'perfrec daemon --help'\n");
	code = 2;
out:
	rec_daemon_free(d);
	rec_cli_parser_release(&p);
	if (!parent && dc.ready_fd >= 0)
		close(dc.ready_fd);   /* failed before serving: the parent says so */
	return code;
}

/* ---- perfrec session (started by the daemon) */

static volatile sig_atomic_t session_stop;

static void on_stop_signal(int sig)
{
	session_stop = sig;
}

enum { OPT_STATE_DIR = REC_OPT_FIRST_FREE, OPT_OWNER };

static const struct rec_cli_opt session_cmd_opts[] = {
	{ "output-dir", REC_OPT_OUTPUT_DIR, "DIR", "" },
	{ "state-dir", OPT_STATE_DIR, "DIR", "" },
	{ "owner", OPT_OWNER, "UID", "" },
	{ "trusted", REC_OPT_TRUSTED, NULL, "" },
	{ "syslog", REC_OPT_SYSLOG, NULL, "" },
	{ NULL, 0, NULL, NULL },
};

int rec_cli_session(int argc, char **argv)
{
	struct rec_session_run_opts so = REC_SESSION_RUN_OPTS_INIT;
	struct rec_recording_opts ro = REC_RECORDING_OPTS_INIT;
	struct rec_sender_opts to = REC_SENDER_OPTS_INIT;
	struct rec_session_proc_opts co = REC_SESSION_PROC_OPTS_INIT;
	struct rec_session_proc *child = NULL;
	struct rec_cli_session_args a;
	struct rec_evspecs evl = REC_EVSPECS_INIT;
	struct rec_cli_parser p;
	struct sigaction sa;
	const char *arg, *outdir = NULL, *statedir = NULL, *name;
	uint64_t owner = 0;
	char prefix[96], *stem = NULL;
	const char **names = NULL;
	bool trusted = false, use_syslog = false, parsed = false;
	int key, code = 1;

	memset(&a, 0, sizeof(a));
	prctl(PR_SET_PDEATHSIG, SIGTERM);   /* the daemon died: finish cleanly */
	prctl(PR_SET_NAME, "perfrec");      /* not "exe" (/proc/self/exe) */
	if (rec_cli_parser_init(&p, session_cmd_opts) < 0)
		return 1;
	while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
		if (key == REC_OPT_OUTPUT_DIR)
			outdir = arg;
		else if (key == OPT_STATE_DIR)
			statedir = arg;
		else if (key == OPT_OWNER)
			key = rec_parse_uint(arg, UINT32_MAX, &owner) < 0 ? -EINVAL : key;
		else if (key == REC_OPT_TRUSTED)
			trusted = true;
		else if (key == REC_OPT_SYSLOG)
			use_syslog = true;
		else
			key = -EINVAL;
		if (key < 0)
			break;
	}
	if (key < 0 || p.optind >= argc || fcntl(CHAN_FD, F_GETFD) < 0) {
		fprintf(stderr, "perfrec session: started by 'perfrec daemon' only "
			"(perfrec session [--output-dir DIR] NAME ARGS..., channel on fd 3)\n");
		code = 2;
		goto out;
	}
	name = argv[p.optind];
	snprintf(prefix, sizeof(prefix), use_syslog ? "perfrec-session-%s" :
		 "perfrec session %s", name);
	print_named_install(prefix, use_syslog);
	child = rec_session_proc_new(CHAN_FD);   /* our errors reach the daemon from here on */
	if (!child)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;   /* no SA_RESTART: the loop's poll returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (outdir && chdir(outdir) < 0) {
		rec_log(REC_LOG_ERROR, "cannot enter the output directory %s: %s", outdir,
			strerror(errno));
		goto out;
	}
	/* its options start at argv[optind + 1]; argv[optind] (NAME) plays
	 * the command's name */
	if (rec_cli_session_parse(argc - p.optind, argv + p.optind, trusted, &a) < 0)
		goto out;
	parsed = true;
	if (rec_cli_record_events(&a.rec, &evl) < 0)
		goto out;
	rec_cli_record_recording_opts(&a.rec, &evl, &ro);
	if (makes_files(&a)) {
		stem = file_stem(&a, name, outdir);
		if (!stem)
			goto out;
	}
	if (a.rec.to) {
		if (rec_cli_net_load(&a.rec.net, false) < 0)
			goto out;
		to.to = a.rec.to;
		to.host = a.rec.host;
		to.token = a.rec.net.token;
		to.token_len = a.rec.net.token_len;
		to.tls = a.rec.net.tls;
		to.spool_bytes = a.rec.send_spool_bytes;
		to.frame_bytes = a.rec.ro.frame_size;
		to.frame_adapts = !a.rec.frame_size_set;
		so.to = &to;
	}
	so.name = name;
	so.rec = &ro;
	so.stem = stem;
	so.rotate_bytes = a.rec.rotate_bytes;
	so.rotate_ns = a.rec.rotate_ns;
	so.keep = a.rec.keep;
	so.flight_bytes = a.rec.flight_bytes;
	so.manifest_dir = statedir;
	so.owner_uid = (uint32_t)owner;
	so.finish_timeout_ms = (uint32_t)(a.rec.finish_timeout_ns / 1000000);
	co.run = &so;
	/* what it samples and counts, as opened (cpu-clock when none given) */
	names = calloc(evl.n + a.rec.c.ncounters + 1, sizeof(*names));
	if (!names)
		goto out;
	for (size_t i = 0; i < evl.n; i++)
		names[co.nevents++] = evl.ev[i].name;
	for (size_t i = 0; i < a.rec.c.ncounters; i++)
		names[co.nevents++] = a.rec.c.counters[i];
	co.events = names;
	co.stop = &session_stop;
	code = rec_session_proc_run(child, &co);
out:
	rec_session_proc_free(child);
	free(names);
	free(stem);
	rec_evspecs_release(&evl);
	if (parsed)
		rec_cli_session_args_release(&a);
	rec_cli_parser_release(&p);
	return code;
}
