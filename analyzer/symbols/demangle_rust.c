/*
 * demangle_rust.c - Rust symbol names, legacy and v0 (see demangle.h for
 * why this is our own code).
 *
 * Legacy (rustc before v0): "_ZN" {<decimal length><bytes>} "E", the last
 * element "h" + 16 hex digits (the hash, dropped). Elements are joined by
 * "::" and unescaped: "$LT$" <, "$GT$" >, "$LP$" (, "$RP$" ), "$C$" ,,
 * "$SP$" @, "$BP$" *, "$RF$" &, "$u7e$" U+007E; ".." is "::"; a leading
 * "_$" loses its underscore. A ".llvm.<hex>" suffix (LTO) is dropped.
 *
 * v0 (RFC 2603, "Rust symbol name mangling v0"): "_R" [version] <path>
 * [<instantiating crate>] [.suffix] (the suffix not shown). The grammar (paths C N M X Y I, types,
 * generic arguments, lifetimes and binders, consts, backrefs "B", punycode
 * identifiers) is walked by a recursive printer that writes the
 * rustc-demangle alternate form. Bounds: ANA_DEMANGLE_RUST_MAX input
 * bytes, ANA_DEMANGLE_RUST_OUT_MAX output bytes (backrefs can double the
 * output per level), ANA_DEMANGLE_RUST_DEPTH nested paths/types/backrefs,
 * V0_STEPS nodes visited in all; a backref must point before itself. Anything outside the grammar (or the
 * newer structural constants: str, refs, arrays, tuples, ADTs in const
 * generics) makes the whole name "not demangled" (NULL), never a partial
 * result.
 */
/* strnlen: POSIX, present on Linux and macOS alike */
#define _POSIX_C_SOURCE 200809L

#include "analyzer/symbols/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- output buffer */

struct out {
	char *b;
	size_t len, cap;
	int err;
	int skip;   /* > 0: parse without printing (impl paths, instantiating crate) */
};

static void put_n(struct out *o, const char *s, size_t n)
{
	if (o->err || o->skip)
		return;
	if (o->len + n + 1 > ANA_DEMANGLE_RUST_OUT_MAX) {
		o->err = 1;
		return;
	}
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 128;
		while (cap < o->len + n + 1)
			cap *= 2;
		char *nb = realloc(o->b, cap);
		if (!nb) {
			o->err = 1;
			return;
		}
		o->b = nb;
		o->cap = cap;
	}
	memcpy(o->b + o->len, s, n);
	o->len += n;
	o->b[o->len] = 0;
}

static void put(struct out *o, const char *s)
{
	put_n(o, s, strlen(s));
}

static void put_c(struct out *o, char c)
{
	put_n(o, &c, 1);
}

static void put_u64(struct out *o, uint64_t v)
{
	char b[24];
	int i = 23;

	b[i] = 0;
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, b + i);
}

/* UTF-8 of a code point (surrogates and > U+10FFFF are errors). */
static int put_utf8(struct out *o, uint32_t c)
{
	char b[4];

	if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		return -1;
	if (c < 0x80) {
		put_c(o, (char)c);
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		put_n(o, b, 2);
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		put_n(o, b, 3);
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (char)(0x80 | (c >> 6 & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		put_n(o, b, 4);
	}
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A ".llvm.<hex or digits>" suffix: 1. */
static int llvm_suffix(const char *s)
{
	if (strncmp(s, ".llvm.", 6))
		return 0;
	s += 6;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (hexval(*s) < 0 && !(*s >= 'A' && *s <= 'F') && *s != '@')
			return 0;
	return 1;
}

/* ---- legacy */

static int is_hash(const char *s, size_t n)
{
	if (n != 17 || s[0] != 'h')
		return 0;
	for (size_t i = 1; i < n; i++)
		if (hexval(s[i]) < 0)
			return 0;
	return 1;
}

/* Unescapes one element; -1 on an escape that is not Rust's. */
static int legacy_element(struct out *o, const char *s, size_t n)
{
	size_t i = 0;

	if (n >= 2 && s[0] == '_' && s[1] == '$')
		i = 1;
	while (i < n) {
		if (s[i] == '.') {
			if (i + 1 < n && s[i + 1] == '.') {
				put(o, "::");
				i += 2;
			} else {
				put_c(o, '.');
				i++;
			}
		} else if (s[i] == '$') {
			const char *e = memchr(s + i + 1, '$', n - i - 1);
			size_t el;
			if (!e)
				return -1;
			el = (size_t)(e - (s + i + 1));
			const char *x = s + i + 1;
			static const struct { const char *esc; char c; } tab[] = {
				{ "SP", '@' }, { "BP", '*' }, { "RF", '&' }, { "LT", '<' },
				{ "GT", '>' }, { "LP", '(' }, { "RP", ')' }, { "C", ',' },
			};
			int done = 0;
			for (size_t k = 0; k < sizeof(tab) / sizeof(tab[0]) && !done; k++) {
				if (strlen(tab[k].esc) == el && !memcmp(tab[k].esc, x, el)) {
					put_c(o, tab[k].c);
					done = 1;
				}
			}
			if (!done) {
				uint32_t c = 0;
				if (el < 2 || el > 7 || x[0] != 'u')
					return -1;
				for (size_t k = 1; k < el; k++) {
					int h = hexval(x[k]);
					if (h < 0)
						return -1;
					c = c << 4 | (uint32_t)h;
				}
				if (c < 0x20 || c == 0x7f || put_utf8(o, c) < 0)
					return -1;
			}
			i += el + 2;
		} else {
			size_t j = i;
			while (j < n && s[j] != '$' && s[j] != '.')
				j++;
			put_n(o, s + i, j - i);
			i = j;
		}
	}
	return 0;
}

char *ana_demangle_rust_legacy(const char *name)
{
	const char *p = name, *elems[64];
	size_t lens[64], n = 0;
	struct out o = { 0 };

	if (!name || strlen(name) > ANA_DEMANGLE_RUST_MAX)
		return NULL;
	if (!strncmp(p, "__ZN", 4))
		p += 4;
	else if (!strncmp(p, "_ZN", 3))
		p += 3;
	else
		return NULL;
	while (*p != 'E') {
		size_t len = 0;
		if (*p < '1' || *p > '9' || n == 64)
			return NULL;
		while (*p >= '0' && *p <= '9') {
			len = len * 10 + (size_t)(*p++ - '0');
			if (len > ANA_DEMANGLE_RUST_MAX)
				return NULL;
		}
		if (strnlen(p, len) < len)
			return NULL;
		for (size_t i = 0; i < len; i++) {
			char c = p[i];
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.'))
				return NULL;
		}
		elems[n] = p;
		lens[n++] = len;
		p += len;
	}
	p++;
	if (*p && !llvm_suffix(p))
		return NULL;
	/* perf's rule: Rust when the last element is the hash */
	if (n < 2 || !is_hash(elems[n - 1], lens[n - 1]))
		return NULL;
	for (size_t i = 0; i + 1 < n; i++) {
		if (i)
			put(&o, "::");
		if (legacy_element(&o, elems[i], lens[i]) < 0)
			o.err = 1;
	}
	if (o.err || !o.b) {
		free(o.b);
		return NULL;
	}
	return o.b;
}

/* ---- v0 */

struct v0 {
	const char *s;        /* after "_R" */
	size_t n, pos;
	struct out o;
	int err;
	unsigned depth;
	unsigned steps;       /* nodes visited: backrefs followed while not
			       * printing (impl paths) could otherwise
			       * double the work per level unseen */
	uint64_t bound_lt;    /* lifetimes bound by enclosing binders */
};

/* Nodes a name may visit; real names need a few hundred. */
#define V0_STEPS 65536

#define FAIL(v) do { (v)->err = 1; return; } while (0)

static int peek(const struct v0 *v)
{
	return v->pos < v->n ? (unsigned char)v->s[v->pos] : -1;
}

static int eat(struct v0 *v, char c)
{
	if (peek(v) == (unsigned char)c) {
		v->pos++;
		return 1;
	}
	return 0;
}

static int next(struct v0 *v)
{
	int c = peek(v);

	if (c < 0)
		v->err = 1;
	else
		v->pos++;
	return c;
}

/* "0" | [1-9]{0-9}; bounded */
static uint64_t decimal(struct v0 *v)
{
	uint64_t x = 0;
	int c = peek(v);

	if (c < '0' || c > '9') {
		v->err = 1;
		return 0;
	}
	v->pos++;
	if (c == '0')
		return 0;
	x = (uint64_t)(c - '0');
	while ((c = peek(v)) >= '0' && c <= '9') {
		v->pos++;
		x = x * 10 + (uint64_t)(c - '0');
		if (x > ANA_DEMANGLE_RUST_MAX * 16ull) {
			v->err = 1;
			return 0;
		}
	}
	return x;
}

/* <base-62-number>: "_" = 0, digits then "_" = value + 1 */
static uint64_t base62(struct v0 *v)
{
	uint64_t x = 0;
	int c;

	if (eat(v, '_'))
		return 0;
	while ((c = next(v)) != '_') {
		int d;
		if (v->err)
			return 0;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'z')
			d = 10 + c - 'a';
		else if (c >= 'A' && c <= 'Z')
			d = 36 + c - 'A';
		else {
			v->err = 1;
			return 0;
		}
		if (x > (UINT64_MAX - (uint64_t)d) / 62) {
			v->err = 1;
			return 0;
		}
		x = x * 62 + (uint64_t)d;
	}
	if (x == UINT64_MAX) {
		v->err = 1;
		return 0;
	}
	return x + 1;
}

/* [tag <base-62-number>]: 0 when absent, else the number + 1 */
static uint64_t opt62(struct v0 *v, char tag)
{
	if (!eat(v, tag))
		return 0;
	uint64_t x = base62(v);
	if (x == UINT64_MAX) {
		v->err = 1;
		return 0;
	}
	return x + 1;
}

struct ident {
	const char *ascii;
	size_t nascii;
	const char *puny;
	size_t npuny;
};

/* <undisambiguated-identifier> = ["u"] <decimal> ["_"] <bytes> */
static void undis_ident(struct v0 *v, struct ident *id)
{
	int puny = eat(v, 'u');
	uint64_t len = decimal(v);

	memset(id, 0, sizeof(*id));
	if (v->err)
		return;
	eat(v, '_');
	if (len > v->n - v->pos) {
		v->err = 1;
		return;
	}
	const char *b = v->s + v->pos;
	v->pos += (size_t)len;
	if (!puny) {
		id->ascii = b;
		id->nascii = (size_t)len;
		return;
	}
	/* punycode with '_' as the delimiter: ascii part before the last
	 * '_', the encoded deltas after it */
	const char *d = NULL;
	for (size_t i = 0; i < len; i++)
		if (b[i] == '_')
			d = b + i;
	if (d) {
		id->ascii = b;
		id->nascii = (size_t)(d - b);
		id->puny = d + 1;
		id->npuny = (size_t)(b + len - d - 1);
	} else {
		id->puny = b;
		id->npuny = (size_t)len;
	}
	if (!id->npuny)
		v->err = 1;
}

/* RFC 3492 decoding, bounded to 256 code points. */
static int puny_decode(const struct ident *id, uint32_t *cp, size_t *ncp)
{
	enum { BASE = 36, TMIN = 1, TMAX = 26, SKEW = 38, DAMP = 700, MAXCP = 256 };
	uint64_t n = 128, i = 0, bias = 72;
	size_t len = 0;

	if (id->nascii > MAXCP)
		return -1;
	for (size_t k = 0; k < id->nascii; k++) {
		unsigned char c = (unsigned char)id->ascii[k];
		if (c >= 0x80)
			return -1;
		cp[len++] = c;
	}
	for (size_t p = 0; p < id->npuny;) {
		uint64_t oldi = i, w = 1;
		for (uint64_t k = BASE;; k += BASE) {
			int c, dig;
			uint64_t t;
			if (p >= id->npuny)
				return -1;
			c = (unsigned char)id->puny[p++];
			if (c >= 'a' && c <= 'z')
				dig = c - 'a';
			else if (c >= '0' && c <= '9')
				dig = c - '0' + 26;
			else
				return -1;
			if ((uint64_t)dig > (UINT32_MAX - i) / w)
				return -1;
			i += (uint64_t)dig * w;
			t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
			if ((uint64_t)dig < t)
				break;
			if (w > UINT32_MAX / (BASE - t))
				return -1;
			w *= BASE - t;
		}
		if (len == MAXCP)
			return -1;
		/* adapt */
		uint64_t delta = i - oldi, numpoints = len + 1, k = 0;
		delta = oldi == 0 ? delta / DAMP : delta / 2;
		delta += delta / numpoints;
		while (delta > ((BASE - TMIN) * TMAX) / 2) {
			delta /= BASE - TMIN;
			k += BASE;
		}
		bias = k + (BASE - TMIN + 1) * delta / (delta + SKEW);
		n += i / (len + 1);
		if (n > 0x10ffff)
			return -1;
		i %= len + 1;
		memmove(cp + i + 1, cp + i, (len - i) * sizeof(*cp));
		cp[i] = (uint32_t)n;
		len++;
		i++;
	}
	*ncp = len;
	return 0;
}

static void print_ident(struct v0 *v, const struct ident *id)
{
	if (!id->puny) {
		put_n(&v->o, id->ascii, id->nascii);
		return;
	}
	uint32_t cp[256];
	size_t n = 0;
	if (puny_decode(id, cp, &n) < 0)
		FAIL(v);
	for (size_t i = 0; i < n; i++)
		if (put_utf8(&v->o, cp[i]) < 0)
			FAIL(v);
}

static void print_path(struct v0 *v, int in_value);
static void print_type(struct v0 *v);
static void print_const(struct v0 *v);

static int enter(struct v0 *v)
{
	if (++v->depth > ANA_DEMANGLE_RUST_DEPTH || ++v->steps > V0_STEPS || v->err ||
	    v->o.err) {
		v->err = 1;
		return 0;
	}
	return 1;
}

/* B <base-62-number>: the position (after "_R") of an earlier item */
static void backref(struct v0 *v, void (*fn)(struct v0 *, int), int arg)
{
	size_t at = v->pos - 1;   /* the 'B' */
	uint64_t target = base62(v);
	size_t save;

	if (v->err || target >= at || !enter(v)) {
		v->err = 1;
		return;
	}
	save = v->pos;
	v->pos = (size_t)target;
	fn(v, arg);
	v->pos = save;
	v->depth--;
}

static void print_lifetime(struct v0 *v, uint64_t lt)
{
	put_c(&v->o, '\'');
	if (lt == 0) {
		put_c(&v->o, '_');
		return;
	}
	if (lt > v->bound_lt)
		FAIL(v);
	uint64_t depth = v->bound_lt - lt;
	if (depth < 26) {
		put_c(&v->o, (char)('a' + depth));
	} else {
		put_c(&v->o, '_');
		put_u64(&v->o, depth);
	}
}

/* [G <base-62-number>]: "for<'a, 'b> " and the lifetimes bound inside */
static uint64_t binder_open(struct v0 *v)
{
	uint64_t n = opt62(v, 'G');

	if (v->err || n > 64) {
		v->err = 1;
		return 0;
	}
	if (n) {
		put(&v->o, "for<");
		for (uint64_t i = 0; i < n; i++) {
			if (i)
				put(&v->o, ", ");
			v->bound_lt++;
			print_lifetime(v, 1);
		}
		put(&v->o, "> ");
	}
	return n;
}

static void print_generic_arg(struct v0 *v)
{
	if (eat(v, 'L'))
		print_lifetime(v, base62(v));
	else if (eat(v, 'K'))
		print_const(v);
	else
		print_type(v);
}

static void generic_args(struct v0 *v)
{
	for (int i = 0; !v->err && !eat(v, 'E'); i++) {
		if (peek(v) < 0)
			FAIL(v);
		if (i)
			put(&v->o, ", ");
		print_generic_arg(v);
	}
}

static void path_fn(struct v0 *v, int in_value)
{
	print_path(v, in_value);
}

static void print_path(struct v0 *v, int in_value)
{
	int tag;
	struct ident id;

	if (!enter(v))
		return;
	tag = next(v);
	switch (tag) {
	case 'C':
		opt62(v, 's');
		undis_ident(v, &id);
		if (!v->err)
			print_ident(v, &id);
		break;
	case 'M':   /* <T> */
		opt62(v, 's');
		v->o.skip++;
		print_path(v, 0);
		v->o.skip--;
		put_c(&v->o, '<');
		print_type(v);
		put_c(&v->o, '>');
		break;
	case 'X':   /* <T as Trait> */
		opt62(v, 's');
		v->o.skip++;
		print_path(v, 0);
		v->o.skip--;
		/* fallthrough */
	case 'Y':
		put_c(&v->o, '<');
		print_type(v);
		put(&v->o, " as ");
		print_path(v, 0);
		put_c(&v->o, '>');
		break;
	case 'N': {
		int ns = next(v);
		uint64_t dis;
		if (v->err || !((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
			v->err = 1;
			break;
		}
		print_path(v, in_value);
		dis = opt62(v, 's');
		undis_ident(v, &id);
		if (v->err)
			break;
		if (ns >= 'A' && ns <= 'Z') {
			put(&v->o, "::{");
			if (ns == 'C')
				put(&v->o, "closure");
			else if (ns == 'S')
				put(&v->o, "shim");
			else
				put_c(&v->o, (char)ns);
			if (id.nascii || id.npuny) {
				put_c(&v->o, ':');
				print_ident(v, &id);
			}
			put_c(&v->o, '#');
			put_u64(&v->o, dis);
			put_c(&v->o, '}');
		} else if (id.nascii || id.npuny) {
			put(&v->o, "::");
			print_ident(v, &id);
		}
		break;
	}
	case 'I':
		print_path(v, in_value);
		if (in_value)
			put(&v->o, "::");
		put_c(&v->o, '<');
		generic_args(v);
		put_c(&v->o, '>');
		break;
	case 'B':
		backref(v, path_fn, in_value);
		break;
	default:
		v->err = 1;
		break;
	}
	v->depth--;
}

static const char *basic_type(int c)
{
	switch (c) {
	case 'a': return "i8";
	case 'b': return "bool";
	case 'c': return "char";
	case 'd': return "f64";
	case 'e': return "str";
	case 'f': return "f32";
	case 'h': return "u8";
	case 'i': return "isize";
	case 'j': return "usize";
	case 'l': return "i32";
	case 'm': return "u32";
	case 'n': return "i128";
	case 'o': return "u128";
	case 's': return "i16";
	case 't': return "u16";
	case 'u': return "()";
	case 'v': return "...";
	case 'x': return "i64";
	case 'y': return "u64";
	case 'z': return "!";
	case 'p': return "_";
	default: return NULL;
	}
}

static void type_fn(struct v0 *v, int unused)
{
	(void)unused;
	print_type(v);
}

/* a path whose last generic argument list is left open: 1 when "<" is
 * open (for dyn Trait<Assoc = T>) */
static int path_open_generics(struct v0 *v);

static int backref_open(struct v0 *v)
{
	size_t at = v->pos - 1;
	uint64_t target = base62(v);
	size_t save;
	int open;

	if (v->err || target >= at || !enter(v)) {
		v->err = 1;
		return 0;
	}
	save = v->pos;
	v->pos = (size_t)target;
	open = path_open_generics(v);
	v->pos = save;
	v->depth--;
	return open;
}

static int path_open_generics(struct v0 *v)
{
	if (eat(v, 'B'))
		return backref_open(v);
	if (eat(v, 'I')) {
		print_path(v, 0);
		put_c(&v->o, '<');
		for (int i = 0; !v->err && !eat(v, 'E'); i++) {
			if (peek(v) < 0) {
				v->err = 1;
				return 0;
			}
			if (i)
				put(&v->o, ", ");
			print_generic_arg(v);
		}
		return 1;
	}
	print_path(v, 0);
	return 0;
}

static void dyn_trait(struct v0 *v)
{
	int open = path_open_generics(v);

	while (!v->err && eat(v, 'p')) {
		struct ident id;
		put(&v->o, open ? ", " : "<");
		open = 1;
		undis_ident(v, &id);
		if (v->err)
			return;
		print_ident(v, &id);
		put(&v->o, " = ");
		print_type(v);
	}
	if (open)
		put_c(&v->o, '>');
}

static void print_type(struct v0 *v)
{
	int c;
	const char *b;

	if (!enter(v))
		return;
	c = next(v);
	if (v->err) {
		v->depth--;
		return;
	}
	if ((b = basic_type(c))) {
		put(&v->o, b);
		v->depth--;
		return;
	}
	switch (c) {
	case 'R':
	case 'Q':
		put_c(&v->o, '&');
		if (eat(v, 'L')) {
			uint64_t lt = base62(v);
			if (lt) {
				print_lifetime(v, lt);
				put_c(&v->o, ' ');
			}
		}
		if (c == 'Q')
			put(&v->o, "mut ");
		print_type(v);
		break;
	case 'P':
		put(&v->o, "*const ");
		print_type(v);
		break;
	case 'O':
		put(&v->o, "*mut ");
		print_type(v);
		break;
	case 'A':
		put_c(&v->o, '[');
		print_type(v);
		put(&v->o, "; ");
		print_const(v);
		put_c(&v->o, ']');
		break;
	case 'S':
		put_c(&v->o, '[');
		print_type(v);
		put_c(&v->o, ']');
		break;
	case 'T': {
		int n = 0;
		put_c(&v->o, '(');
		for (; !v->err && !eat(v, 'E'); n++) {
			if (peek(v) < 0) {
				v->err = 1;
				break;
			}
			if (n)
				put(&v->o, ", ");
			print_type(v);
		}
		if (n == 1)
			put_c(&v->o, ',');
		put_c(&v->o, ')');
		break;
	}
	case 'F': {
		uint64_t saved = v->bound_lt, n = binder_open(v);
		int unsafe_ = eat(v, 'U'), args = 0;
		(void)n;
		if (unsafe_)
			put(&v->o, "unsafe ");
		if (eat(v, 'K')) {
			put(&v->o, "extern \"");
			if (eat(v, 'C')) {
				put_c(&v->o, 'C');
			} else {
				struct ident id;
				undis_ident(v, &id);
				if (v->err || id.puny) {
					v->err = 1;
					break;
				}
				for (size_t i = 0; i < id.nascii; i++)
					put_c(&v->o, id.ascii[i] == '_' ? '-' : id.ascii[i]);
			}
			put(&v->o, "\" ");
		}
		put(&v->o, "fn(");
		for (; !v->err && !eat(v, 'E'); args++) {
			if (peek(v) < 0) {
				v->err = 1;
				break;
			}
			if (args)
				put(&v->o, ", ");
			print_type(v);
		}
		put_c(&v->o, ')');
		if (eat(v, 'u')) {
			/* returns () */
		} else {
			put(&v->o, " -> ");
			print_type(v);
		}
		v->bound_lt = saved;
		break;
	}
	case 'D': {
		uint64_t saved = v->bound_lt;
		put(&v->o, "dyn ");
		binder_open(v);
		for (int n = 0; !v->err && !eat(v, 'E'); n++) {
			if (peek(v) < 0) {
				v->err = 1;
				break;
			}
			if (n)
				put(&v->o, " + ");
			dyn_trait(v);
		}
		v->bound_lt = saved;
		if (!eat(v, 'L')) {
			v->err = 1;
			break;
		}
		uint64_t lt = base62(v);
		if (lt) {
			put(&v->o, " + ");
			print_lifetime(v, lt);
		}
		break;
	}
	case 'B':
		backref(v, type_fn, 0);
		break;
	default:
		v->pos--;
		print_path(v, 0);
		break;
	}
	v->depth--;
}

static void const_fn(struct v0 *v, int unused)
{
	(void)unused;
	print_const(v);
}

/* integers, bool and char; "p" is a placeholder ("_") */
static void print_const(struct v0 *v)
{
	int ty, neg = 0;
	const char *hex;
	size_t nhex = 0;
	uint64_t x = 0;

	if (!enter(v))
		return;
	if (eat(v, 'p')) {
		put_c(&v->o, '_');
		v->depth--;
		return;
	}
	if (eat(v, 'B')) {
		backref(v, const_fn, 0);
		v->depth--;
		return;
	}
	ty = next(v);
	if (v->err || !strchr("hmtyojaslxnibc", ty) || !ty) {
		v->err = 1;
		v->depth--;
		return;
	}
	if (strchr("aslxni", ty))
		neg = eat(v, 'n');
	hex = v->s + v->pos;
	while (peek(v) >= 0 && peek(v) != '_') {
		if (hexval((char)peek(v)) < 0) {
			v->err = 1;
			v->depth--;
			return;
		}
		v->pos++;
		nhex++;
	}
	if (!eat(v, '_')) {
		v->err = 1;
		v->depth--;
		return;
	}
	while (nhex && *hex == '0') {   /* leading zeros carry nothing */
		hex++;
		nhex--;
	}
	if (nhex <= 16)
		for (size_t i = 0; i < nhex; i++)
			x = x << 4 | (uint64_t)hexval(hex[i]);
	if (ty == 'b') {
		if (nhex > 1 || x > 1)
			v->err = 1;
		else
			put(&v->o, x ? "true" : "false");
	} else if (ty == 'c') {
		if (nhex > 8 || x > 0x10ffff || (x >= 0xd800 && x < 0xe000)) {
			v->err = 1;
		} else {
			put_c(&v->o, '\'');
			if (x == '\'' || x == '\\') {
				put_c(&v->o, '\\');
				put_c(&v->o, (char)x);
			} else if (x == '\n') {
				put(&v->o, "\\n");
			} else if (x == '\t') {
				put(&v->o, "\\t");
			} else if (x == '\r') {
				put(&v->o, "\\r");
			} else if (x == 0) {
				put(&v->o, "\\0");
			} else if (x < 0x20 || x == 0x7f) {
				static const char digits[] = "0123456789abcdef";
				put(&v->o, "\\u{");
				if (x >= 0x10)
					put_c(&v->o, digits[x >> 4]);
				put_c(&v->o, digits[x & 15]);
				put_c(&v->o, '}');
			} else {
				put_utf8(&v->o, (uint32_t)x);
			}
			put_c(&v->o, '\'');
		}
	} else {
		if (neg)
			put_c(&v->o, '-');
		if (nhex <= 16) {
			put_u64(&v->o, x);
		} else {
			put(&v->o, "0x");
			put_n(&v->o, hex, nhex);
		}
	}
	v->depth--;
}

char *ana_demangle_rust_v0(const char *name)
{
	struct v0 v;
	const char *p = name;
	size_t n;

	if (!name)
		return NULL;
	n = strlen(name);
	if (n > ANA_DEMANGLE_RUST_MAX)
		return NULL;
	if (!strncmp(p, "__R", 3))
		p += 3;
	else if (!strncmp(p, "_R", 2))
		p += 2;
	else
		return NULL;
	memset(&v, 0, sizeof(v));
	v.s = p;
	v.n = strlen(p);
	/* a version number: only the initial version (none) exists */
	if (peek(&v) >= '0' && peek(&v) <= '9')
		return NULL;
	/* a path starts with an uppercase tag */
	if (!(peek(&v) >= 'A' && peek(&v) <= 'Z'))
		return NULL;
	print_path(&v, 1);
	/* the instantiating crate, not shown */
	if (!v.err && peek(&v) >= 'A' && peek(&v) <= 'Z') {
		v.o.skip++;
		print_path(&v, 0);
		v.o.skip--;
	}
	/* a vendor suffix (".llvm.<hash>" from LTO, ".0" on statics) is
	 * not shown, as c++filt does */
	if (!v.err && v.pos < v.n && v.s[v.pos] != '.' && v.s[v.pos] != '$')
		v.err = 1;
	if (v.err || v.o.err || !v.o.b) {
		free(v.o.b);
		return NULL;
	}
	return v.o.b;
}
