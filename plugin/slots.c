/*
 * Slots: see slots.h.
 */
#include <errno.h>
#include <string.h>

#include "plugin/children.h"
#include "plugin/engine.h"
#include "plugin/fatal.h"
#include "plugin/guard.h"
#include "plugin/reexec.h"
#include "plugin/slots.h"
#include "plugin/log.h"

int slots_set(struct slots *s, const struct js_auth *a, int limit, struct buf *err,
	      int *changed)
{
	int ret = 0, old_limit = s->limit, old_active = s->js_active;

	if (a) {
		if (!(s->js_active && js_uses(&s->js, a)) && !js_held(&s->js)) {
			js_close(&s->js);
			s->js_active = js_open(&s->js, a, err) == 0;
			if (!s->js_active)
				ret = -1;
		}
		s->limit = 1;
	} else {
		if (s->js_active && !js_held(&s->js)) {
			js_close(&s->js);
			s->js_active = 0;
		}
		s->limit = limit > 0 ? limit : 1;
	}
	*changed = s->limit != old_limit || s->js_active != old_active;
	return ret;
}

void slots_round(struct slots *s)
{
	s->want_token = 0;
	s->watch_children = 0;
}

/*
 * The implicit slot is also make's own: make starts a child without a
 * token whenever it has no other child running, so a job of ours on it
 * while make runs a recipe is one job over -jN (a recursive make doing
 * so at every level was several over).  The slot is ours only
 *  - while make reads its makefiles (it starts no recipe then), or
 *  - for a job make's thread is blocked on in a wait, once make has no
 *    running child but the pool's own processes: blocked in our
 *    function, make can start none, and the children it has can only
 *    end.  Children that have ended count as gone although make cannot
 *    reap them before the wait returns; that is what lets a wait finish
 *    when its jobs need the tokens of make's finished children
 *    (MAKE-FACTS, "Deadlock").
 * The children's state is read from /proc, once per wait once it says
 * idle; until then the engine looks again every CHILDREN_CHECK_MS.
 */
struct job *slots_implicit_job(struct slots *s, struct job *q,
			       int (*owns)(void *ctx, pid_t pid), void *ctx)
{
	struct job *j;

	if (s->implicit_busy || !q)
		return NULL;
	if (s->reading)
		return q;
	for (j = q; j && !j->in_wait; j = j->next)
		;
	if (!j || s->make_idle_seq == s->wait_seq)
		return j;
	if (children_running(owns, ctx)) {
		s->watch_children = 1;
		return NULL;
	}
	s->make_idle_seq = s->wait_seq;
	return j;
}

int slots_take_token(struct slots *s, unsigned char *tok)
{
	/*
	 * Jobs started before the jobserver existed hold no token but do
	 * use the budget: let them stand in for tokens.
	 */
	if (s->limit_running > 0)
		return 0;
	/* before the read: no token is held that a SIGKILL could lose */
	guard_cover(&s->js);
	switch (js_try_acquire(&s->js, tok)) {
	case 1:
		reexec_hold(*tok, 1);
		/* the handler may have run between read() and record */
		if (fatal_dying()) {
			slots_give_back(s, *tok);
			return 0;
		}
		return 1;
	case 0:
		s->want_token = 1;
		return 0;
	}
	if (!s->js_warned++)
		log_msg("jobserver unusable (%s); running one job at a time",
			   strerror(errno));
	if (!js_held(&s->js))
		js_close(&s->js);
	s->js_active = 0;
	s->limit = 1;
	return -1;
}

/* A token goes back, unless fatal.c's handler did that already. */
void slots_give_back(struct slots *s, unsigned char tok)
{
	if (!reexec_hold(tok, -1))
		js_forget(&s->js);
	else if (js_release(&s->js, tok) < 0)
		log_msg("could not give a jobserver token back:");
}

int slots_take_limit(struct slots *s, int ahead)
{
	if (!ahead && s->limit_running + 1 >= s->limit)
		return 0;
	s->limit_running++;
	return 1;
}

void slots_release(struct slots *s, struct job *j)
{
	switch (j->slot) {
	case SLOT_IMPLICIT:
		s->implicit_busy = 0;
		break;
	case SLOT_TOKEN:
		slots_give_back(s, j->token);
		break;
	case SLOT_LIMIT:
		s->limit_running--;
		break;
	case SLOT_LENT:  /* the collector's, collect.c keeps count */
	case SLOT_NONE:
		break;
	}
	j->slot = SLOT_NONE;
}

int slots_poll_fd(const struct slots *s)
{
	return s->want_token && s->js_active ? js_poll_fd(&s->js) : -1;
}

int slots_watch_drain(const struct slots *s)
{
	return js_held(&s->js) && js_sees_make(&s->js);
}

/*
 * The top-level make, at exit, closes its jobserver write end and then
 * reads tokens back until EOF - before any atexit handler of ours runs.
 * Jobs never waited for that hold tokens would keep it waiting (forever,
 * for a job that never ends).  make closing its end is the sign.
 */
int slots_make_draining(const struct slots *s)
{
	return s->js_active && js_held(&s->js) && js_make_draining(&s->js);
}

const char *slots_mode(const struct slots *s)
{
	if (!s->js_active)
		return "limit";
	return js_style(&s->js) == JS_FIFO ? "jobserver-fifo" : "jobserver-pipe";
}

void slots_close(struct slots *s)
{
	js_close(&s->js);
	s->js_active = 0;
}
