/*
 * guard.h - the token guard (guard.c), a process of its own.
 */
#ifndef ASYNC_WORKER_GUARD_H
#define ASYNC_WORKER_GUARD_H

/*
 * guard_main: `asynccompile-worker --guard PID`, started by the plugin in
 * make PID (plugin/guard.h says why and when).  Waits for the end of its
 * stdin, then gives back the tokens make's record still holds; returns
 * the exit status (0, or 1 after one line on stderr).
 */
int guard_main(long pid);

#endif
