/*
 * msgtab.h - which messages a role accepts, and the one lookup that
 * dispatches a frame to its handler.  A role (PROTOCOL.md, "Roles": the
 * worker, the supervisor, the pool, the plugin's subprocess backend, the
 * collector) declares a const table of routes in its own file, each a
 * message type, the ids it may come on and a static handler:
 *
 *	static const struct msg_route sup_routes[] = {
 *		{ MSG_JOB, MSG_ON_JOB, sup_on_job },
 *		{ MSG_STATS, MSG_ON_CONTROL, sup_on_stats },
 *	};
 *	static const struct msg_table sup_table = MSG_TABLE("supervisor", sup_routes);
 *
 * and hands each frame (id >= 0: the shutdown frame carries no message,
 * its reader handles it first) to msg_dispatch().  A frame no route
 * takes is the one uniform protocol error, "unexpected message TYPE on
 * ID for the ROLE".  PROTOCOL.md's roles table lists every route, one
 * per row; t0008 checks that it and the tables in the code agree, so
 * keep the rows one per line in the form above.
 *
 * Pure: nothing here blocks, prints or allocates but the reason.
 */
#ifndef ASYNC_MSGTAB_H
#define ASYNC_MSGTAB_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

/* The ids a message may come on (frame.h): bits of msg_route.on. */
enum msg_scope {
	MSG_ON_CONTROL = 1, /* id 0 */
	MSG_ON_JOB = 2,     /* id > 0 */
};

/* The message a handler is given: valid during the call. */
struct msg_in {
	int64_t id;        /* the frame's: > 0 a job's, 0 control */
	int type;
	const void *p;     /* the whole payload, type byte first */
	size_t n;
	/* what follows the type byte, for "%.*s": ERROR's and STATS's text */
	const char *text;
	int text_len;
};

/*
 * Handle one message.  Returns a value >= 0 that means what the role
 * says (go on, stop...); what goes wrong inside is reported by the
 * handler, the role's way.
 */
typedef int msg_handler(void *ctx, const struct msg_in *m);

struct msg_route {
	int type;            /* enum proto_type, or msg_collect.h's */
	unsigned on;         /* enum msg_scope bits */
	msg_handler *handle;
};

struct msg_table {
	const char *role;    /* names it in the error: "supervisor" */
	const struct msg_route *routes;
	size_t n;
};

#define MSG_TABLE(role, routes) { (role), (routes), sizeof(routes) / sizeof((routes)[0]) }

/* The handler of a message a role accepts and does nothing with: 0. */
int msg_ignore(void *ctx, const struct msg_in *m);

/*
 * The route of `t` for a message of type `type` on frame id `id` (>= 0),
 * or NULL when the role does not accept it there.
 */
const struct msg_route *msg_route_find(const struct msg_table *t, int type, int64_t id);

/*
 * Hand the message to its route's handler and return what it returns;
 * or, when no route takes it, return -1 with "unexpected message TYPE on
 * ID for the ROLE" appended to err (err.h).
 */
int msg_dispatch(const struct msg_table *t, void *ctx, int64_t id, const void *p, size_t n,
		 struct buf *err);

/*
 * The name of a message type, both channels' ("JOB", "STEP"), or NULL
 * for a type byte that is none.
 */
const char *msg_type_name(int type);

#endif
