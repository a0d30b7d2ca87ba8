/*
 * msgtab.c - the routes of a role's messages (msgtab.h) and the one
 * "unexpected message" error.
 */
#include "lib/msgtab.h"
#include "lib/err.h"
#include "lib/frame.h"
#include "lib/msg.h"
#include "lib/msg_collect.h"

#include <inttypes.h>
#include <stdio.h>

const char *msg_type_name(int type)
{
	/* one switch over both channels: a type byte used twice does not compile */
	switch (type) {
#define MSG_NAME_CASE(name, byte) case byte: return #name;
	MSG_TYPES(MSG_NAME_CASE)
	MSG_COLLECT_TYPES(MSG_NAME_CASE)
#undef MSG_NAME_CASE
	}
	return NULL;
}

int msg_ignore(void *ctx, const struct msg_in *m)
{
	(void)ctx, (void)m;
	return 0;
}

const struct msg_route *msg_route_find(const struct msg_table *t, int type, int64_t id)
{
	unsigned on = id == PROTO_ID_CONTROL ? MSG_ON_CONTROL : id > 0 ? MSG_ON_JOB : 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->routes[i].type == type && (t->routes[i].on & on))
			return &t->routes[i];
	return NULL;
}

int msg_dispatch(const struct msg_table *t, void *ctx, int64_t id, const void *p, size_t n,
		 struct buf *err)
{
	int type = msg_type(p, n);
	const struct msg_route *r = msg_route_find(t, type, id);
	const char *name = msg_type_name(type);
	char what[32], where[40];

	if (r) {
		struct msg_in m = {
			.id = id, .type = type, .p = p, .n = n, .text = (const char *)p + 1,
			.text_len = n - 1 > (size_t)INT32_MAX ? INT32_MAX : (int)(n - 1),
		};
		return r->handle(ctx, &m);
	}
	if (name)
		snprintf(what, sizeof what, "%s", name);
	else if (type < 0)
		snprintf(what, sizeof what, "with no type byte");
	else
		snprintf(what, sizeof what, "type %d", type);
	if (id > 0)
		snprintf(where, sizeof where, "job %" PRId64, id);
	else
		snprintf(where, sizeof where, "id %" PRId64, id);
	return err_fail(err, "unexpected message %s on %s for the %s", what, where, t->role);
}
