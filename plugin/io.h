/*
 * io.h - the engine's I/O thread (io.c): it owns the backend, the slots
 * and every descriptor to the pool, and blocks every signal so that
 * make's handlers keep running on make's thread.  engine_start() starts
 * it, engine_shutdown() ends it; nothing else calls into it.
 */
#ifndef ASYNC_IO_H
#define ASYNC_IO_H

#include "plugin/backend.h"

/*
 * On make's thread, before each start of the thread: take what it reads
 * of the environment (ASYNC_COMPILE_FAULTS, fault.h) afresh.
 */
void io_init(void);
/* The thread's body (pthread_create); returns once the_engine.stopping is set. */
void *io_main(void *arg);
/* How the backend reports to the I/O thread (given to backend_*_new). */
extern const struct backend_report io_report;

#endif
