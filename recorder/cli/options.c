/*
 * options.c - option tables, help text and the shared options; see
 * options.h.
 */
#include "recorder/cli/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/cli/parse.h"
#include "recorder/events/evparse.h"
#include "recorder/log.h"

/* Help text starts in this column. */
#define HELP_COL 25

int rec_cli_parser_init(struct rec_cli_parser *p, const struct rec_cli_opt *opts)
{
	size_t n = 0, k = 0, s = 0;

	memset(p, 0, sizeof(*p));
	p->opts = opts;
	while (opts[n].name)
		n++;
	p->longopts = calloc(n + 1, sizeof(*p->longopts));
	p->shortopts = calloc(2 * n + 3, 1);
	if (!p->longopts || !p->shortopts) {
		rec_cli_parser_release(p);
		return -ENOMEM;
	}
	/* '+': stop at the first operand (the command); ':': report a
	 * missing value apart from an unknown option */
	p->shortopts[s++] = '+';
	p->shortopts[s++] = ':';
	for (size_t i = 0; i < n; i++) {
		const struct rec_cli_opt *o = &opts[i];

		if (!o->key)
			continue;   /* a section title */
		if (o->name[0]) {   /* "" names a short-only option */
			p->longopts[k].name = o->name;
			p->longopts[k].has_arg = !o->value ? no_argument :
						 o->value[0] == '[' ? optional_argument :
						 required_argument;
			p->longopts[k].val = o->key;
			k++;
		}
		if (o->key < 256) {
			p->shortopts[s++] = (char)o->key;
			if (o->value)
				p->shortopts[s++] = ':';
		}
	}
	p->optind = -1;
	return 0;
}

void rec_cli_parser_release(struct rec_cli_parser *p)
{
	free(p->longopts);
	free(p->shortopts);
	p->longopts = NULL;
	p->shortopts = NULL;
}

/* The option as the user typed it ("-I", "--interval"), from the word
 * getopt took it from: a value in a word of its own follows its option,
 * and an option inside a cluster (-ag) has not advanced optind yet. */
static void set_token(struct rec_cli_parser *p, char **argv, int before,
		      int key)
{
	const char *word;
	size_t n;

	if (optarg && optind - 1 >= before && optarg == argv[optind - 1] &&
	    optind - 2 >= before)
		word = argv[optind - 2];
	else if (optind > before)
		word = argv[optind - 1];
	else
		word = argv[before];
	if (word && word[0] == '-' && word[1] == '-') {
		n = strcspn(word, "=");
		if (n >= sizeof(p->token_buf))
			n = sizeof(p->token_buf) - 1;
		memcpy(p->token_buf, word, n);
		p->token_buf[n] = '\0';
	} else {
		int c = key > 0 && key < 256 && key != '?' && key != ':' ? key : optopt;

		snprintf(p->token_buf, sizeof(p->token_buf), "-%c", c > 0 && c < 256 ? c : '?');
	}
	p->token = p->token_buf;
}

static int next_key(struct rec_cli_parser *p, int argc, char **argv,
		    const char **arg)
{
	int before, key;

	if (p->optind < 0) {
		optind = 0;   /* GNU: full reset, another parse may have run */
		opterr = 0;
	}
	before = optind ? optind : 1;
	key = getopt_long(argc, argv, p->shortopts, p->longopts, NULL);
	p->optind = optind;
	*arg = optarg;
	if (key == -1)
		return 0;
	set_token(p, argv, before, key);
	if (key == ':') {
		rec_log(REC_LOG_ERROR, "option '%s' needs a value", p->token);
		return -EINVAL;
	}
	if (key == '?') {
		rec_log(REC_LOG_ERROR, "unknown option '%s'", p->token);
		return -EINVAL;
	}
	return key;
}

int rec_cli_next(struct rec_cli_parser *p, int argc, char **argv,
		 const char **arg)
{
	for (;;) {
		int key = next_key(p, argc, argv, arg), ret;

		if (key <= 0 || !p->common)
			return key;
		ret = rec_cli_common_option(p->common, p, key, *arg);
		if (ret == 0)
			return key;
		if (ret < 0)
			return ret;
	}
}

void rec_cli_parser_operands_inline(struct rec_cli_parser *p)
{
	p->shortopts[0] = '-';   /* GNU getopt: operands come back as key 1 */
}

int rec_cli_bad_value(const struct rec_cli_parser *p, const char *arg,
		      const char *what)
{
	rec_log(REC_LOG_ERROR, "bad %s '%s': not %s", p->token ? p->token : "value",
		arg ? arg : "", what);
	return -EINVAL;
}

/* One option's left column: "  -e, --event EVENTS" */
static int left_column(const struct rec_cli_opt *o, char *buf, size_t len)
{
	/* an optional value is written "--opt[=VALUE]" */
	const char *sep = o->value && o->value[0] != '[' ? " " : "";

	if (!o->name[0])
		return snprintf(buf, len, "  -%c%s%s", o->key, o->value ? " " : "",
				o->value ? o->value : "");
	if (o->key > 0 && o->key < 256)
		return snprintf(buf, len, "  -%c, --%s%s%s", o->key, o->name,
				sep, o->value ? o->value : "");
	return snprintf(buf, len, "      --%s%s%s", o->name, sep,
			o->value ? o->value : "");
}

void rec_cli_help(FILE *f, const char *usage, const char *about,
		  const struct rec_cli_opt *opts, const char *footer)
{
	fprintf(f, "%s\n", usage);
	if (about)
		fprintf(f, "\n%s", about);
	for (const struct rec_cli_opt *o = opts; o->name; o++) {
		char left[128];
		const char *h = o->help ? o->help : "";
		int n;

		if (!o->key) {
			fprintf(f, "\n%s:\n", o->name);
			continue;
		}
		n = left_column(o, left, sizeof(left));
		fputs(left, f);
		/* a long left column puts the help on the next line */
		if (n >= HELP_COL - 1)
			fprintf(f, "\n%*s", HELP_COL, "");
		else
			fprintf(f, "%*s", HELP_COL - n, "");
		while (*h) {
			size_t len = strcspn(h, "\n");

			fwrite(h, 1, len, f);
			fputc('\n', f);
			h += len;
			if (*h == '\n') {
				h++;
				if (*h)
					fprintf(f, "%*s", HELP_COL, "");
			}
		}
		if (!o->help || !o->help[0])
			fputc('\n', f);
	}
	if (footer)
		fprintf(f, "\n%s", footer);
}

/* ---- shared options */

static int push_str(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv) {
		rec_log(REC_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	*v = nv;
	nv[(*n)++] = s;
	return 0;
}

int rec_cli_common_option(struct rec_cli_common *c, const struct rec_cli_parser *p,
			  int key, const char *arg)
{
	int ret;

	switch (key) {
	case 'e':
		ret = push_str(&c->events, &c->nevents, arg);
		return ret < 0 ? ret : 1;
	case REC_OPT_COUNTERS:
		ret = push_str(&c->counters, &c->ncounters, arg);
		return ret < 0 ? ret : 1;
	case 'a':
		c->all_cpus = true;
		return 1;
	case 'C':
		rec_cpumap_release(&c->cpus);
		if (rec_cpumap_parse(&c->cpus, arg) < 0)
			return rec_cli_bad_value(p, arg, "a cpu list (e.g. 0-3,6)");
		c->have_cpus = true;
		return 1;
	case 'p':
	case 't':
		if (c->tasks != REC_TARGET_SYSTEM &&
		    c->tasks != (key == 'p' ? REC_TARGET_PIDS : REC_TARGET_TIDS)) {
			rec_log(REC_LOG_ERROR, "choose -p (processes) or -t (threads), "
				"not both");
			return -EINVAL;
		}
		rec_threadmap_release(&c->ids);
		if (rec_threadmap_parse(&c->ids, arg) < 0)
			return rec_cli_bad_value(p, arg, key == 'p' ?
				"a pid list (e.g. 1234 or 12,40-43)" :
				"a tid list (e.g. 1234 or 12,40-43)");
		c->tasks = key == 'p' ? REC_TARGET_PIDS : REC_TARGET_TIDS;
		return 1;
	case 'I':
	case REC_OPT_INTERVAL_PRINT:
		if (rec_parse_duration(arg, 1000000, &c->interval_ns) < 0 ||
		    c->interval_ns < 1000000)
			return rec_cli_bad_value(p, arg, "an interval of at least 1ms "
				"(e.g. 100ms, 1s; a bare number is milliseconds)");
		c->have_interval = true;
		return 1;
	case 'd':
		if (rec_parse_duration(arg, 1000000000ull, &c->duration_ns) < 0 ||
		    !c->duration_ns)
			return rec_cli_bad_value(p, arg, "a duration (e.g. 10, 2.5, 500ms; "
						 "a bare number is seconds)");
		return 1;
	case 'o':
		c->output = arg;
		return 1;
	default:
		return 0;
	}
}

int rec_cli_common_finish(struct rec_cli_common *c, int argc, char **argv,
			  int optind)
{
	bool tasks = c->tasks != REC_TARGET_SYSTEM;

	if (optind >= 0 && optind < argc)
		c->command = argv + optind;
	if (tasks && (c->all_cpus || c->have_cpus)) {
		rec_log(REC_LOG_ERROR, "choose one target: -a/-C (CPUs), -p (pids) "
			"or -t (tids)");
		return -EINVAL;
	}
	if (tasks && c->command) {
		rec_log(REC_LOG_ERROR, "a command cannot be combined with -p/-t");
		return -EINVAL;
	}
	if (c->have_cpus)
		c->target = REC_TARGET_CPUS;
	else if (tasks)
		c->target = c->tasks;
	else if (c->command && !c->all_cpus)
		c->target = REC_TARGET_COMMAND;
	else
		c->target = REC_TARGET_SYSTEM;
	return 0;
}

void rec_cli_common_release(struct rec_cli_common *c)
{
	free(c->events);
	free(c->counters);
	rec_cpumap_release(&c->cpus);
	rec_threadmap_release(&c->ids);
	memset(c, 0, sizeof(*c));
}
