/*
 * hooks_intl.c - message catalogues and the time zone, read by glibc
 * inside itself (the models are described in hooks_locale.c's top
 * comment).  Both are asked for far more often than they change, so
 * each model runs once per distinct input (tr_once: a small cache taken
 * with a try-lock; a thread that finds it busy, or a fork child that
 * inherited it taken, models again rather than waits).
 */
#include <fcntl.h>
#include <langinfo.h>
#include <libintl.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "trace/trace.h"

/* libintl.h makes these macros when optimising; the hooks are functions */
#undef gettext
#undef dgettext
#undef ngettext
#undef dngettext

#define TR_MESSAGES_DIR "/usr/share/locale"

/* ---- a cache of what was modelled ---- */

#define TR_SEEN_N 32
#define TR_SEEN_MAX 512

static struct {
	int lock, next;
	size_t len[TR_SEEN_N];
	char key[TR_SEEN_N][TR_SEEN_MAX];
} tr_seen;

/*
 * 1 if the key (n strings) was modelled already in this process; else
 * remembers it (when it can) and returns 0.  A fork child inherits what
 * its parent modelled: those events are in the same log already.
 */
int tr_once(const char *const *parts, int n)
{
	char key[TR_SEEN_MAX];
	size_t len = 0;
	int found = 0;

	for (int i = 0; i < n; i++) {
		size_t l = strlen(parts[i]) + 1;

		if (len + l > sizeof key)
			return 0;
		memcpy(key + len, parts[i], l);
		len += l;
	}
	if (__atomic_exchange_n(&tr_seen.lock, 1, __ATOMIC_ACQUIRE))
		return 0;
	for (int i = 0; i < TR_SEEN_N && !found; i++)
		found = tr_seen.len[i] == len && !memcmp(tr_seen.key[i], key, len);
	if (!found) {
		memcpy(tr_seen.key[tr_seen.next], key, len);
		tr_seen.len[tr_seen.next] = len;
		tr_seen.next = (tr_seen.next + 1) % TR_SEEN_N;
	}
	__atomic_store_n(&tr_seen.lock, 0, __ATOMIC_RELEASE);
	return found;
}

/* ---- message catalogues ---- */

struct tr_msg {
	const char *dir, *cat, *mo;
	int found;
};

static void tr_msg_variant(const char *variant, void *ctx)
{
	struct tr_msg *m = ctx;
	const char *parts[] = { m->dir, "/", variant, "/", m->cat, NULL, NULL, NULL };
	char path[PATH_MAX];
	struct stat st;

	if (tr_join(path, sizeof path, parts) < 0)
		return;
	if (tr_stat_model(path, 0, &st) < 0) {
		tr_lookup(TL_LIST, 0, AT_FDCWD, path, 0, errno, NULL);
		return;
	}
	tr_emit(TL_LIST, 0, &st, AT_FDCWD, path);
	parts[5] = "/";
	parts[6] = m->mo;
	if (tr_join(path, sizeof path, parts) < 0)
		return;
	if (tr_stat_model(path, 0, &st) == 0) {
		tr_emit(TL_READ, 0, &st, AT_FDCWD, path);
		m->found = 1;
	} else {
		tr_lookup(TL_READ, 0, AT_FDCWD, path, 0, errno, NULL);
	}
}

static void tr_messages(const char *domain, int category)
{
	const char *loc, *langs, *dir, *cat;
	char mo[256], one[256];
	struct tr_msg m;

	if (category < 0 || category > LC_IDENTIFICATION || category == LC_ALL)
		return;
	loc = nl_langinfo(_NL_LOCALE_NAME(category));
	if (!loc || tr_is_c(loc))
		return;
	if (!domain)
		domain = TR_CALL(textdomain)(NULL);
	if (!domain || strlen(domain) + 4 >= sizeof mo)
		return;
	dir = TR_CALL(bindtextdomain)(domain, NULL);
	if (!dir)
		dir = TR_MESSAGES_DIR;
	langs = getenv("LANGUAGE");
	if (!langs || !*langs)
		langs = loc;
	cat = category == LC_MESSAGES ? "LC_MESSAGES" : category == LC_TIME ? "LC_TIME" :
	      category == LC_CTYPE ? "LC_CTYPE" : category == LC_COLLATE ? "LC_COLLATE" :
	      category == LC_MONETARY ? "LC_MONETARY" : category == LC_NUMERIC ? "LC_NUMERIC" :
	      NULL;
	if (!cat) {
		tr_opaque("a message catalogue of an unusual category:", domain);
		return;
	}
	{
		const char *parts[] = { "messages", domain, dir, langs, cat };

		if (tr_once(parts, 5))
			return;
	}
	strcat(strcpy(mo, domain), ".mo");
	m.dir = dir;
	m.cat = cat;
	m.mo = mo;
	m.found = 0;
	tr_alias_read();
	for (const char *p = langs; *p;) {
		size_t n = strcspn(p, ":");

		if (n && n < sizeof one) {
			memcpy(one, p, n);
			one[n] = 0;
			/* glibc stops at C: no translation from there on */
			if (tr_is_c(one))
				break;
			tr_names(one, tr_msg_variant, &m);
		}
		p += n + (p[n] == ':');
	}
	/* a catalogue in another character set is converted through gconv */
	if (m.found)
		tr_gconv();
}

void tr_messages_model(const char *domain)
{
	tr_messages(domain, LC_MESSAGES);
}

static void tr_messages_guarded(const char *domain, int category)
{
	struct tr_guard g;
	struct tr_batch b;

	tr_lock(&g);
	tr_batch_begin(&b);
	tr_messages(domain, category);
	tr_batch_end(&b);
	tr_unlock(&g);
}

TR_HOOK char *bindtextdomain(const char *domain, const char *dir)
{
	char *r = TR_CALL(bindtextdomain)(domain, dir);

	if (dir && domain && tr_active())
		tr_messages_guarded(domain, LC_MESSAGES);
	return r;
}

TR_HOOK char *textdomain(const char *domain)
{
	char *r = TR_CALL(textdomain)(domain);

	if (domain && tr_active())
		tr_messages_guarded(domain, LC_MESSAGES);
	return r;
}

#define TR_GETTEXT(domain, category, call)                                                 \
	do {                                                                               \
		if (tr_active())                                                           \
			tr_messages_guarded(domain, category);                             \
		return call;                                                               \
	} while (0)

TR_HOOK char *gettext(const char *msgid)
{
	TR_GETTEXT(NULL, LC_MESSAGES, TR_CALL(gettext)(msgid));
}

TR_HOOK char *dgettext(const char *domain, const char *msgid)
{
	TR_GETTEXT(domain, LC_MESSAGES, TR_CALL(dgettext)(domain, msgid));
}

TR_HOOK char *dcgettext(const char *domain, const char *msgid, int category)
{
	TR_GETTEXT(domain, category, TR_CALL(dcgettext)(domain, msgid, category));
}

TR_HOOK char *__dcgettext(const char *domain, const char *msgid, int category)
{
	TR_GETTEXT(domain, category, TR_CALL(__dcgettext)(domain, msgid, category));
}

TR_HOOK char *ngettext(const char *msgid, const char *plural, unsigned long n)
{
	TR_GETTEXT(NULL, LC_MESSAGES, TR_CALL(ngettext)(msgid, plural, n));
}

TR_HOOK char *dngettext(const char *domain, const char *msgid, const char *plural,
			unsigned long n)
{
	TR_GETTEXT(domain, LC_MESSAGES, TR_CALL(dngettext)(domain, msgid, plural, n));
}

TR_HOOK char *dcngettext(const char *domain, const char *msgid, const char *plural,
			 unsigned long n, int category)
{
	TR_GETTEXT(domain, category, TR_CALL(dcngettext)(domain, msgid, plural, n, category));
}

/* ---- the time zone ---- */

/* glibc's own names, which its headers do not declare */
size_t __strftime_l(char *s, size_t max, const char *fmt, const struct tm *tm, locale_t l);
size_t __wcsftime_l(wchar_t *s, size_t max, const wchar_t *fmt, const struct tm *tm, locale_t l);

static void tr_tz(void)
{
	const char *tz = getenv("TZ"), *tzdir = getenv("TZDIR");
	char path[PATH_MAX];
	struct tr_guard g;
	struct tr_batch b;
	struct stat st;

	if (!tzdir || !*tzdir)
		tzdir = "/usr/share/zoneinfo";
	{
		const char *parts[] = { "tz", tz ? "set" : "unset", tz ? tz : "", tzdir };

		if (tr_once(parts, 4))
			return;
	}
	tr_lock(&g);
	tr_batch_begin(&b);
	if (tz && *tz == ':')
		tz++;
	if (tz && !*tz)
		tz = "Universal";
	{
		const char *abs[] = { tz, NULL };
		const char *rel[] = { tzdir, "/", tz, NULL };
		const char *dflt[] = { "/etc/localtime", NULL };

		if (tr_join(path, sizeof path, !tz ? dflt : tz[0] == '/' ? abs : rel) < 0) {
			tr_opaque("a time zone named too long", NULL);
			tr_batch_end(&b);
			tr_unlock(&g);
			return;
		}
	}
	tr_emit_model(TL_READ, 0, path);
	if (tr_stat_model(path, 0, &st) < 0 || !S_ISREG(st.st_mode)) {
		/* TZ is a POSIX rule: its daylight rules may come from posixrules */
		const char *rules[] = { tzdir, "/posixrules", NULL };

		if (tr_join(path, sizeof path, rules) == 0)
			tr_emit_model(TL_READ, 0, path);
	}
	tr_batch_end(&b);
	tr_unlock(&g);
}

#define TR_TZ(call)                                                                        \
	do {                                                                               \
		if (tr_active())                                                           \
			tr_tz();                                                           \
		return call;                                                               \
	} while (0)

TR_HOOK void tzset(void)
{
	if (tr_active())
		tr_tz();
	TR_CALL(tzset)();
}

TR_HOOK struct tm *localtime(const time_t *t)
{
	TR_TZ(TR_CALL(localtime)(t));
}

TR_HOOK struct tm *localtime_r(const time_t *t, struct tm *tm)
{
	TR_TZ(TR_CALL(localtime_r)(t, tm));
}

/* gmtime too: glibc loads the zone on first use, and leap seconds apply */
TR_HOOK struct tm *gmtime(const time_t *t)
{
	TR_TZ(TR_CALL(gmtime)(t));
}

TR_HOOK struct tm *gmtime_r(const time_t *t, struct tm *tm)
{
	TR_TZ(TR_CALL(gmtime_r)(t, tm));
}

TR_HOOK time_t mktime(struct tm *tm)
{
	TR_TZ(TR_CALL(mktime)(tm));
}

TR_HOOK time_t timelocal(struct tm *tm)
{
	TR_TZ(TR_CALL(timelocal)(tm));
}

TR_HOOK time_t timegm(struct tm *tm)
{
	TR_TZ(TR_CALL(timegm)(tm));
}

TR_HOOK char *ctime(const time_t *t)
{
	TR_TZ(TR_CALL(ctime)(t));
}

TR_HOOK char *ctime_r(const time_t *t, char *buf)
{
	TR_TZ(TR_CALL(ctime_r)(t, buf));
}

TR_HOOK size_t strftime(char *s, size_t max, const char *fmt, const struct tm *tm)
{
	TR_TZ(TR_CALL(strftime)(s, max, fmt, tm));
}

TR_HOOK size_t strftime_l(char *s, size_t max, const char *fmt, const struct tm *tm, locale_t l)
{
	TR_TZ(TR_CALL(strftime_l)(s, max, fmt, tm, l));
}

/* the names libstdc++ (time_put) and Python (time.strftime) call */
TR_HOOK size_t __strftime_l(char *s, size_t max, const char *fmt, const struct tm *tm, locale_t l)
{
	TR_TZ(TR_CALL(__strftime_l)(s, max, fmt, tm, l));
}

TR_HOOK size_t wcsftime(wchar_t *s, size_t max, const wchar_t *fmt, const struct tm *tm)
{
	TR_TZ(TR_CALL(wcsftime)(s, max, fmt, tm));
}

TR_HOOK size_t wcsftime_l(wchar_t *s, size_t max, const wchar_t *fmt, const struct tm *tm,
			  locale_t l)
{
	TR_TZ(TR_CALL(wcsftime_l)(s, max, fmt, tm, l));
}

TR_HOOK size_t __wcsftime_l(wchar_t *s, size_t max, const wchar_t *fmt, const struct tm *tm,
			    locale_t l)
{
	TR_TZ(TR_CALL(__wcsftime_l)(s, max, fmt, tm, l));
}
