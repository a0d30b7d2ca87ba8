/*
 * test-msgtab.c - lib/msgtab.h: a route is found by type and by the ids
 * it may come on, its handler gets the frame and its value is returned,
 * anything else is the one "unexpected message" error, and every type
 * of both channels has its name.
 */
#include <stdint.h>
#include <string.h>

#include "lib/msg.h"
#include "lib/msg_collect.h"
#include "lib/msgtab.h"
#include "tap.h"

struct seen {
	int calls;
	struct msg_in m;
};

static int on_job(void *ctx, const struct msg_in *m)
{
	struct seen *s = ctx;

	s->calls++;
	s->m = *m;
	return 7;
}

static int on_any(void *ctx, const struct msg_in *m)
{
	((struct seen *)ctx)->calls++;
	return m->id > 0 ? 1 : 0;
}

static const struct msg_route routes[] = {
	{ MSG_JOB, MSG_ON_JOB, on_job },
	{ MSG_STATS, MSG_ON_CONTROL | MSG_ON_JOB, on_any },
};
static const struct msg_table table = MSG_TABLE("tester", routes);

/* The error of one dispatch that no route takes, or NULL if one did. */
static const char *unexpected(int64_t id, const void *p, size_t n)
{
	struct seen s = { 0 };
	struct buf *why = fresh_why();

	if (msg_dispatch(&table, &s, id, p, n, why) != -1 || s.calls)
		return NULL;
	return why_text();
}

int main(void)
{
	unsigned char job[] = { MSG_JOB, 1, 2, 3 }, stats[] = { MSG_STATS },
		      other[] = { 99 }, hello[] = { MSG_HELLO };
	struct seen s = { 0 };

	is_int(table.n, 2, "MSG_TABLE counts the routes");
	ok(msg_route_find(&table, MSG_JOB, 5) == &routes[0], "JOB on a job id: its route");
	ok(!msg_route_find(&table, MSG_JOB, 0), "JOB on id 0: no route");
	ok(!msg_route_find(&table, MSG_JOB, -1), "nothing on the shutdown id");
	ok(msg_route_find(&table, MSG_STATS, 0) && msg_route_find(&table, MSG_STATS, 3),
	   "a route on both scopes takes both");
	ok(!msg_route_find(&table, MSG_HELLO, 0), "a type with no route: none");

	is_int(msg_dispatch(&table, &s, 5, job, sizeof job, fresh_why()), 7,
	       "dispatch returns the handler's value");
	ok(s.calls == 1 && s.m.id == 5 && s.m.type == MSG_JOB && s.m.p == job &&
	   s.m.n == sizeof job, "the handler gets the context, the id, the type and the payload");
	ok(s.m.text == (const char *)job + 1 && s.m.text_len == 3,
	   "and what follows the type byte, as text");
	ok(!tap_why.len, "a handled message says nothing");
	s.calls = 0;
	ok(msg_dispatch(&table, &s, 0, stats, 1, NULL) == 0 &&
	   msg_dispatch(&table, &s, 9, stats, 1, NULL) == 1 && s.calls == 2,
	   "one handler on both scopes, told which by the id");

	is_string(unexpected(0, job, sizeof job), "unexpected message JOB on id 0 for the tester",
		  "a known type on the wrong id: the error names it and the id");
	is_string(unexpected(3, hello, 1), "unexpected message HELLO on job 3 for the tester",
		  "a known type the role takes nowhere");
	is_string(unexpected(1, other, 1), "unexpected message type 99 on job 1 for the tester",
		  "an unknown type byte is named by its number");
	is_string(unexpected(2, "", 0), "unexpected message with no type byte on job 2 for the tester",
		  "an empty payload");
	is_string(unexpected(-1, NULL, 0), "unexpected message with no type byte on id -1 for the tester",
		  "the shutdown frame is no message");
	is_int(msg_dispatch(&table, &s, 0, hello, 1, NULL), -1, "a NULL err is allowed");
	ok(msg_ignore(NULL, NULL) == 0, "msg_ignore does nothing and goes on");

	is_string(msg_type_name(MSG_HELLO), "HELLO", "a pipe type's name");
	is_string(msg_type_name(MSG_STEP), "STEP", "a collect channel type's name");
	{
		int named = 0, types = 0, right = 0;

#define TYPE_ROW(name, byte) types++, right += msg_type_name(byte) && \
		!strcmp(msg_type_name(byte), #name) && MSG_##name == byte;
		MSG_TYPES(TYPE_ROW)
		MSG_COLLECT_TYPES(TYPE_ROW)
#undef TYPE_ROW
		is_int(right, types, "every type of both channels has its own name");
		for (int t = -1; t < 256; t++)
			named += msg_type_name(t) != NULL;
		is_int(named, types, "no other type byte has one");
		ok(types >= 11 && !msg_type_name(0) && !msg_type_name(-1),
		   "0 and -1 are no types");
	}
	buf_release(&tap_why);
	return done_testing();
}
