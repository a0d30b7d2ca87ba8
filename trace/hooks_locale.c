/*
 * hooks_locale.c - files glibc reads inside itself for locales, message
 * catalogues and the time zone, modelled from the outside.  Each model
 * names every file or directory glibc may look at, present or not (over-
 * approximation is safe: a path that changes without mattering only
 * stops a reuse).
 *
 * Locales (setlocale, newlocale), for each category loaded with a name
 * other than C or POSIX (name "" resolves as glibc does: LC_ALL, LC_xxx,
 * LANG):
 *  - READ /usr/lib/locale/locale-archive (unless LOCPATH is set: then
 *    glibc does not use it) and /usr/share/locale/locale.alias;
 *  - LIST of each locale directory (LOCPATH's entries, or
 *    /usr/lib/locale), and for every variant of the name glibc tries
 *    (language[_territory][.codeset|.normalised codeset][@modifier], for
 *    the name and for its alias if locale.alias has one): LIST of
 *    DIR/VARIANT if it exists (its absence is in DIR's LIST) and READ of
 *    the category's file in it (LC_MESSAGES/SYS_LC_MESSAGES for
 *    messages);
 *  - LC_CTYPE also loads the character set converters' configuration:
 *    READ of gconv-modules.cache and gconv-modules, LIST of
 *    gconv-modules.d, in GCONV_PATH's directories and glibc's own; the
 *    converter modules it dlopens are found by the object scan.
 * Message catalogues (bindtextdomain, textdomain, the gettext family,
 * and the "libc" domain glibc's own messages use once LC_MESSAGES is not
 * C): when the thread's LC_MESSAGES locale is not C, the languages are
 * LANGUAGE's (up to a C entry) or that locale's name; for each variant
 * V of each, LIST DIR/V/LC_MESSAGES (DIR: the domain's bound directory,
 * /usr/share/locale by default) and, where it exists, READ of
 * DIR/V/LC_MESSAGES/DOMAIN.mo; plus locale.alias.  Each (domain,
 * directory, languages, category) is modelled once per process.
 * Time zone (tzset and every function that calls it: localtime, mktime,
 * gmtime, ctime, strftime...): READ of the file TZ names (unset:
 * /etc/localtime; relative: under TZDIR or /usr/share/zoneinfo; "":
 * Universal) and, when that is not a file, of TZDIR/posixrules, once per
 * value of TZ and TZDIR.
 */
#include <fcntl.h>
#include <langinfo.h>
#include <libintl.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"

/* glibc's own name, which its headers do not declare */
locale_t __newlocale(int mask, const char *name, locale_t base);

#define TR_LOCALE_DIR "/usr/lib/locale"
#define TR_GCONV_DIR "/usr/lib/x86_64-linux-gnu/gconv"

static const char *const tr_cat_names[] = {
	[LC_CTYPE] = "LC_CTYPE", [LC_NUMERIC] = "LC_NUMERIC", [LC_TIME] = "LC_TIME",
	[LC_COLLATE] = "LC_COLLATE", [LC_MONETARY] = "LC_MONETARY",
	[LC_MESSAGES] = "LC_MESSAGES", [LC_PAPER] = "LC_PAPER", [LC_NAME] = "LC_NAME",
	[LC_ADDRESS] = "LC_ADDRESS", [LC_TELEPHONE] = "LC_TELEPHONE",
	[LC_MEASUREMENT] = "LC_MEASUREMENT", [LC_IDENTIFICATION] = "LC_IDENTIFICATION",
};
#define TR_NCATS ((int)(sizeof tr_cat_names / sizeof *tr_cat_names))

int tr_is_c(const char *name)
{
	return !name || !strcmp(name, "C") || !strcmp(name, "POSIX");
}

/* An absolute path from pieces (NULL-terminated); -1 if too long. */
int tr_join(char *buf, size_t size, const char *const *parts)
{
	size_t o = 0;

	for (int i = 0; parts[i]; i++) {
		size_t n = strlen(parts[i]);

		if (o + n >= size)
			return -1;
		memcpy(buf + o, parts[i], n);
		o += n;
	}
	buf[o] = 0;
	return 0;
}

/* locale.alias's expansion of name (glibc compares without case). */
static int tr_alias_scan(const char *name, char *out, size_t size)
{
	char buf[16384];
	int fd = TR_CALL(openat)(AT_FDCWD, TR_ALIAS_FILE, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;

	if (fd >= 0)
		TR_CALL(close)(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (char *line = buf, *next; line && *line; line = next) {
		char *a, *v;
		size_t al, vl;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		a = line + strspn(line, " \t");
		al = strcspn(a, " \t");
		if (!al || *a == '#')
			continue;
		v = a + al + strspn(a + al, " \t");
		vl = strcspn(v, " \t\r");
		a[al] = 0;
		if (vl && vl < size && !strcasecmp(a, name)) {
			memcpy(out, v, vl);
			out[vl] = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * The last few answers of tr_alias_scan, so that the file is read once
 * per name in a process, not once per category and domain (gcc asks for
 * four).  The C library reads it once per process too; its READ is
 * written once (tr_alias_read).  Small: a vfork copies it twice.
 */
#define TR_ALIAS_MEMO 4
static struct {
	int lock, next;
	char name[TR_ALIAS_MEMO][32];
	char alias[TR_ALIAS_MEMO][64];
	int found[TR_ALIAS_MEMO];
} tr_alias_memo;

static int tr_alias(const char *name, char *out, size_t size)
{
	int found = -1, k;
	size_t n = strlen(name);

	if (n >= sizeof tr_alias_memo.name[0] ||
	    __atomic_exchange_n(&tr_alias_memo.lock, 1, __ATOMIC_ACQUIRE))
		return tr_alias_scan(name, out, size);
	for (k = 0; k < TR_ALIAS_MEMO && found < 0; k++)
		if (!strcmp(tr_alias_memo.name[k], name) && tr_alias_memo.name[k][0] &&
		    strlen(tr_alias_memo.alias[k]) < size) {
			found = tr_alias_memo.found[k];
			strcpy(out, tr_alias_memo.alias[k]);
		}
	__atomic_store_n(&tr_alias_memo.lock, 0, __ATOMIC_RELEASE);
	if (found >= 0)
		return found;
	found = tr_alias_scan(name, out, size);
	if (found && strlen(out) >= sizeof tr_alias_memo.alias[0])
		return found;
	if (__atomic_exchange_n(&tr_alias_memo.lock, 1, __ATOMIC_ACQUIRE))
		return found;
	k = tr_alias_memo.next;
	tr_alias_memo.next = (k + 1) % TR_ALIAS_MEMO;
	memcpy(tr_alias_memo.name[k], name, n + 1);
	strcpy(tr_alias_memo.alias[k], found ? out : "");
	tr_alias_memo.found[k] = found;
	__atomic_store_n(&tr_alias_memo.lock, 0, __ATOMIC_RELEASE);
	return found;
}

/* The name's variants, as _nl_explode_name and _nl_make_l10nflist try them. */

static void tr_variants(const char *name, tr_variant_fn fn, void *ctx)
{
	char lang[128], terr[128] = "", code[128] = "", norm[132] = "", mod[128] = "", v[520];
	size_t n = strcspn(name, "_.@");
	const char *p = name + n;

	if (!n || n >= sizeof lang)
		return;
	memcpy(lang, name, n);
	lang[n] = 0;
	if (*p == '_' && (n = strcspn(p, ".@")) < sizeof terr) {
		memcpy(terr, p, n);
		terr[n] = 0;
		p += n;
	}
	if (*p == '.' && (n = strcspn(p, "@")) < sizeof code) {
		size_t k = 1, digits = 1;

		memcpy(code, p, n);
		code[n] = 0;
		p += n;
		norm[0] = '.';
		for (size_t i = 1; code[i] && k < sizeof norm - 4; i++)
			if ((code[i] >= 'a' && code[i] <= 'z') || (code[i] >= '0' && code[i] <= '9') ||
			    (code[i] >= 'A' && code[i] <= 'Z')) {
				norm[k++] = (char)(code[i] | (code[i] >= 'A' && code[i] <= 'Z' ? 0x20 : 0));
				digits &= code[i] >= '0' && code[i] <= '9';
			}
		norm[k] = 0;
		if (digits && k > 1) {
			memmove(norm + 4, norm + 1, k);
			memcpy(norm + 1, "iso", 3);
		}
	}
	if (*p == '@' && strlen(p) < sizeof mod)
		strcpy(mod, p);
	for (int t = 0; t < (*terr ? 2 : 1); t++)
		for (int c = 0; c < (*code ? 3 : 1); c++)
			for (int m = 0; m < (*mod ? 2 : 1); m++) {
				const char *cs = !*code || c == 2 ? "" : c == 0 ? code : norm;
				const char *parts[] = { lang, t ? "" : terr, cs, m ? "" : mod, NULL };

				if (c == 1 && !strcmp(code, norm))
					continue;
				if (tr_join(v, sizeof v, parts) == 0)
					fn(v, ctx);
			}
}

/* name and its alias, each with its variants */
void tr_names(const char *name, tr_variant_fn fn, void *ctx)
{
	char alias[256];

	tr_variants(name, fn, ctx);
	if (tr_alias(name, alias, sizeof alias) && strcmp(alias, name))
		tr_variants(alias, fn, ctx);
}

/* ---- locales ---- */

struct tr_loc {
	const char *dir;
	unsigned cats;    /* bit per category */
};

static void tr_locale_variant(const char *variant, void *ctx)
{
	const struct tr_loc *l = ctx;
	char path[PATH_MAX];
	const char *parts[] = { l->dir, "/", variant, NULL, NULL, NULL };
	struct stat st;

	if (tr_join(path, sizeof path, parts) < 0 || tr_stat_model(path, 0, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return;
	tr_emit(TL_LIST, 0, &st, AT_FDCWD, path);
	for (int c = 0; c < TR_NCATS; c++) {
		if (!tr_cat_names[c] || !(l->cats & (1u << c)))
			continue;
		parts[3] = "/";
		parts[4] = c == LC_MESSAGES ? "LC_MESSAGES/SYS_LC_MESSAGES" : tr_cat_names[c];
		if (tr_join(path, sizeof path, parts) == 0)
			tr_emit_model(TL_READ, 0, path);
	}
}

static void tr_gconv_dir(const char *dir, int cache)
{
	char path[PATH_MAX];
	const char *files[] = { "/gconv-modules.cache", "/gconv-modules", "/gconv-modules.d" };

	for (int i = cache ? 0 : 1; i < 3; i++) {
		const char *parts[] = { dir, files[i], NULL };

		if (tr_join(path, sizeof path, parts) == 0)
			tr_emit_model(i == 2 ? TL_LIST : TL_READ, 0, path);
	}
}

void tr_gconv(void)
{
	const char *gp = getenv("GCONV_PATH");
	const char *key[] = { "gconv", gp ? gp : "" };
	char dir[PATH_MAX];

	if (tr_once(key, 2))
		return;
	if (gp && *gp)
		for (const char *p = gp; *p;) {
			size_t n = strcspn(p, ":");

			if (n && n < sizeof dir) {
				memcpy(dir, p, n);
				dir[n] = 0;
				tr_gconv_dir(dir, 0);
			}
			p += n + (p[n] == ':');
		}
	tr_gconv_dir(TR_GCONV_DIR, !(gp && *gp));
}

void tr_alias_read(void)
{
	const char *key[] = { "alias" };

	if (!tr_once(key, 1))
		tr_emit_model(TL_READ, 0, TR_ALIAS_FILE);
}

/* One locale name loaded for the categories in cats. */
static void tr_locale_name(const char *name, unsigned cats)
{
	const char *locpath = getenv("LOCPATH");
	struct tr_loc l = { TR_LOCALE_DIR, cats };
	char dir[PATH_MAX], bits[24];

	if (tr_is_c(name) || !*name)
		return;
	if (strchr(name, '/')) {
		tr_opaque("a locale named by path:", name);
		return;
	}
	tr_fmt_u64(bits, cats);
	{
		const char *key[] = { "locale", locpath ? locpath : "", name, bits };

		if (tr_once(key, 4))
			return;
	}
	tr_alias_read();
	{
		const char *key[] = { "locale-base", locpath ? locpath : "" };

		if (!tr_once(key, 2)) {
			if (!locpath || !*locpath) {
				tr_emit_model(TL_READ, 0, TR_LOCALE_DIR "/locale-archive");
				tr_emit_model(TL_LIST, 0, TR_LOCALE_DIR);
			}
		}
	}
	if (locpath && *locpath) {
		for (const char *p = locpath; *p;) {
			size_t n = strcspn(p, ":");

			if (n && n < sizeof dir) {
				memcpy(dir, p, n);
				dir[n] = 0;
				l.dir = dir;
				tr_emit_model(TL_LIST, 0, dir);
				tr_names(name, tr_locale_variant, &l);
			}
			p += n + (p[n] == ':');
		}
	} else {
		tr_names(name, tr_locale_variant, &l);
	}
	if (cats & (1u << LC_CTYPE))
		tr_gconv();
}

/* The name "" gives category c, as glibc resolves it. */
static const char *tr_env_name(int c)
{
	const char *v = getenv("LC_ALL");

	if (v && *v)
		return v;
	v = getenv(tr_cat_names[c]);
	if (v && *v)
		return v;
	v = getenv("LANG");
	return v && *v ? v : "C";
}

/* The value of category c in a composite "LC_CTYPE=x;LC_NUMERIC=y;..." name. */
static int tr_composite(const char *name, int c, char *out, size_t size)
{
	size_t k = strlen(tr_cat_names[c]);

	for (const char *p = name; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
		if (!strncmp(p, tr_cat_names[c], k) && p[k] == '=') {
			size_t n = strcspn(p + k + 1, ";");

			if (n >= size)
				return 0;
			memcpy(out, p + k + 1, n);
			out[n] = 0;
			return 1;
		}
	}
	return 0;
}

/* Categories in cats loaded by name (possibly "" or composite). */
static void tr_locale_load(unsigned cats, const char *name)
{
	char one[TR_NCATS][256];
	const char *names[TR_NCATS] = { 0 };

	for (int c = 0; c < TR_NCATS; c++) {
		if (!tr_cat_names[c] || !(cats & (1u << c)))
			continue;
		if (!*name)
			names[c] = tr_env_name(c);
		else if (strchr(name, ';'))
			names[c] = tr_composite(name, c, one[c], sizeof one[c]) ? one[c] : NULL;
		else
			names[c] = name;
	}
	/* one model per distinct name, for all the categories it names */
	for (int c = 0; c < TR_NCATS; c++) {
		unsigned same = 0;

		if (!names[c])
			continue;
		for (int k = c; k < TR_NCATS; k++)
			if (names[k] && !strcmp(names[k], names[c])) {
				same |= 1u << k;
				if (k != c)
					names[k] = NULL;
			}
		tr_locale_name(names[c], same);
	}
	if ((cats & (1u << LC_MESSAGES)))
		tr_messages_model("libc");
}

static unsigned tr_all_cats(void)
{
	unsigned m = 0;

	for (int c = 0; c < TR_NCATS; c++)
		if (tr_cat_names[c])
			m |= 1u << c;
	return m;
}

TR_HOOK char *setlocale(int category, const char *name)
{
	char *r;
	struct tr_guard g;
	struct tr_batch b;

	if (!tr_active() || !name)
		return TR_CALL(setlocale)(category, name);
	r = TR_CALL(setlocale)(category, name);
	tr_lock(&g);
	tr_batch_begin(&b);
	if (category == LC_ALL)
		tr_locale_load(tr_all_cats(), name);
	else if (category >= 0 && category < TR_NCATS && tr_cat_names[category])
		tr_locale_load(1u << category, name);
	tr_objects_scan();
	tr_batch_end(&b);
	tr_unlock(&g);
	return r;
}

static locale_t tr_newlocale(struct tr_real *real, int mask, const char *name, locale_t base)
{
	locale_t (*fn)(int, const char *, locale_t) = tr_real_get(real);
	locale_t r;
	struct tr_guard g;
	struct tr_batch b;
	unsigned cats = 0;

	if (!tr_active() || !name)
		return fn(mask, name, base);
	r = fn(mask, name, base);
	tr_lock(&g);
	tr_batch_begin(&b);
	for (int c = 0; c < TR_NCATS; c++)
		if (tr_cat_names[c] && (mask & (1 << c)))
			cats |= 1u << c;
	tr_locale_load(cats, name);
	tr_objects_scan();
	tr_batch_end(&b);
	tr_unlock(&g);
	return r;
}

TR_HOOK locale_t newlocale(int mask, const char *name, locale_t base)
{
	return tr_newlocale(&tr_real_newlocale, mask, name, base);
}

/* libstdc++ calls the C library's own name for it (std::locale) */
TR_HOOK locale_t __newlocale(int mask, const char *name, locale_t base)
{
	return tr_newlocale(&tr_real___newlocale, mask, name, base);
}
