/*
 * startdir.h - the directory a build was started from: where the user
 * typed `make`, before any -C.  The configuration's ./asynccompile.yaml
 * (config/find.c) and a relative `trace:` path are found there, so that
 * `make -C /lib/modules/.../build M=$PWD` run in a module's directory
 * reads the module's file and writes nothing into the kernel's tree.
 *
 * Which make's start counts: the top-level make's.  A sub-make (MAKELEVEL
 * 1 or more in its environment) and a command run by a recipe share the
 * build's starting directory, however many -C lie between: the process
 * whose environment has no MAKELEVEL (or 0) above them is the top-level
 * make.  What is known of it, read from /proc (same user only):
 *   - its command line: started without -C, its current directory is
 *     where it started (make changes directory only for -C);
 *   - with -C, its environment's PWD (what the user's shell said), if
 *     following its -C options from there leads to its current
 *     directory (same device and inode); else, checked the same way, the
 *     current directory of its parent (the shell that started it);
 *   - otherwise (neither leads there, or a -C spelled in a way this
 *     parser does not know): its current directory, the one -C named.
 * The top-level make itself knows better (plugin/request.c asks make for
 * the directory it started in) and passes it as `own`.
 *
 * Any thread; reads /proc and the environment, never writes.
 */
#ifndef ASYNC_STARTDIR_H
#define ASYNC_STARTDIR_H

#include <sys/types.h>

/*
 * The build's starting directory, malloc'd.  `own` is the caller's own
 * starting directory, used when the caller is not below a make (no
 * MAKELEVEL, or 0) or no make is found above it; NULL means the current
 * directory.  Never NULL (aborts on allocation failure, as buf.h).
 */
char *startdir_find(const char *own);
/*
 * Where the make process `pid` was started (the rules above), malloc'd,
 * or NULL when /proc tells nothing (gone, another user's).
 */
char *startdir_of_make(pid_t pid);

#endif
