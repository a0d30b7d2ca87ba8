/*
 * worker.h - the worker executable's roles, each in a file of its own:
 * serve.h (a pool worker), supervise.h (the pool supervisor), both called
 * from main(), and serve_main also (fork start method) from a child the
 * plugin forks, which is why serve.c is linked into asynccompile.so;
 * collect.h (the collector a recipe runs); guard.h (the token guard of a
 * make that inherited a jobserver).  What serve and supervise share:
 *
 * Both speak the framed protocol on in_fd/out_fd (blocking descriptors are
 * fine; they are made non-blocking as needed), start by answering the
 * peer's MSG_HELLO, and return an exit status for the process (0 after a
 * clean shutdown frame or EOF on in_fd, non-zero after a protocol error,
 * which is also reported to the peer as MSG_ERROR and to stderr).
 * They install their own signal handling (SIGTERM/SIGINT/SIGHUP and the
 * parent-death signal end every job's process group, then return) and
 * never return while a job they started is still alive.
 */
#ifndef ASYNC_WORKER_H
#define ASYNC_WORKER_H

/*
 * A worker sends STARTED once a job has run this long (serve_main's
 * started_after_ms, supervise_main's default); a pool that sees no
 * STARTED counts a job's time from this much before its RESULT.
 */
#define WORKER_STARTED_AFTER_MS 20

#include "worker/collect.h"
#include "worker/guard.h"
#include "worker/serve.h"
#include "worker/supervise.h"

#endif
