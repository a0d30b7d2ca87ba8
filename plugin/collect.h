/*
 * collect.h - recipe waits.  Inside a recipe, $(async-wait) hands its
 * build steps to a wait of this module and expands to a command line,
 * the collector (asynccompile-worker --collect, worker/collect.c), that
 * make runs like any other line.  The collector connects to this make
 * over the private socket (waitsock.h), proves which wait it runs for
 * with the wait's number and cookie, and is sent each step's output and
 * status in queue order as the steps end (lib/msg_collect.h).
 *
 * The slot: the collector's line holds one of make's slots (its token or
 * make's implicit one) and does no work, so once it has connected, the
 * engine may run ONE of its wait's queued steps without a token on that
 * slot ("lent", SLOT_LENT); or, if one of them already runs on a token
 * (taken as it was queued, before make ran the line), that token goes
 * back to make and the step runs on the collector's slot instead.  The
 * collector cannot end before its steps do, so the slot is never used
 * twice.  This is what keeps -jN recipes
 * waiting at once from holding every slot while their steps starve.
 *
 * Ownership: collect_add() takes the jobs (the engine has taken them out
 * of its name table; job->wait names their wait).  A job goes back to
 * the engine through engine_collect_forget() once it was sent, or
 * engine_collect_abandon() when its collector left before the end or
 * make exits first.  A wait no collector claims (make did not run the
 * line: -n, -q, an earlier line failed) lives until collect_stop().
 *
 * Threads: every call is made with the_engine.lock held; collect_open() and
 * collect_add() on make's thread, the rest on the engine's I/O thread
 * (collect_stop() on either, once the backend is gone).
 */
#ifndef ASYNC_COLLECT_H
#define ASYNC_COLLECT_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/msg_collect.h"
#include "plugin/job.h"

/* The socket, made once: 0, or -1 with the reason in err. */
int collect_open(struct buf *err);
/* Its path: make's thread may read it once collect_open() succeeded. */
const char *collect_socket(void);
/*
 * A new wait for jobs[0..n-1] (in queue order; the array is copied).
 * Returns its number and fills its cookie (hex, NUL-terminated).
 * `progress` (0: no; 1: on a terminal; 2: always): its collector is sent
 * PROGRESS messages, to draw the status line (lib/progress.h).
 */
int64_t collect_add(struct job **jobs, size_t n, char cookie[COLLECT_COOKIE_HEX + 1],
		    int progress);
/* Descriptors to poll: at most collect_nfds() of them into fds. */
size_t collect_nfds(void);
size_t collect_pollfds(struct pollfd *fds, size_t max);
/* What poll() said about the descriptors collect_pollfds() gave. */
void collect_events(const struct pollfd *fds, size_t n);
/*
 * A running job of a collector whose slot is free, that holds a token
 * (or a place under the limit): the engine gives that back and moves the
 * job onto the collector's slot (collect_lend), so make can start another
 * target with it.  NULL when there is none.
 */
struct job *collect_swappable(void);
/* A queued job that may run on its collector's slot now, or NULL. */
struct job *collect_lendable(void);
/* j (from collect_lendable) is dispatched on its collector's slot. */
void collect_lend(struct job *j);
/* j, a job of a wait (or any job: then nothing), has started on a worker. */
void collect_started(struct job *j);
/*
 * j, a job of a wait, has ended (DONE; its slot already released):
 * its collector's slot is free again, and what is now in order is sent.
 */
void collect_ended(struct job *j, int was_lent);
/* make exits: every wait is abandoned, every connection closed, the socket removed. */
void collect_stop(void);

#endif
