/*
 * tracelog.h - the events a traced command leaves behind: the format the
 * preload library (trace/preload.c, loaded into every process of a traced
 * command through LD_PRELOAD) appends and the runner's decoder
 * (readset.h) reads.
 *
 * The log is one memfd per traced job, shared memory (struct tl_shm
 * below): the runner creates it, sizes it, writes its header, opens a
 * second description of it with O_RDWR|O_APPEND and hands that one to the
 * command at descriptor TL_FD (the environment variable TL_ENV says which
 * descriptor, and the identity of the log, see below).  Every process of
 * the command maps it and appends events with no system call: it reserves
 * room with an atomic fetch-add on the header's head, so the log's order
 * is the order in which the room was taken, across processes, and an
 * event is in the log before the call it describes returns (the order the
 * runner's rules read, readset.h).
 *
 * A log without the header (a harness's plain file or memfd: the bench,
 * the unit tests of the legacy path) gets one whole event per write(2) on
 * the O_APPEND description instead: appends to one description are
 * serialised by the kernel.  So does a process that cannot map a shared
 * log; its write lands past the shared area, which the runner takes as
 * an opaque run (tl_shm_check).
 *
 * An event is a struct tl_event followed by `len - sizeof(struct
 * tl_event)` bytes of path (or text), without a terminating NUL.  Native
 * byte order: the log never leaves the machine that wrote it.  Paths are
 * absolute: a relative path is written as the process's working directory,
 * '/', and the path as the program gave it (no "..", "." or symbolic link
 * is resolved; the same string is looked up again to validate it).
 *
 * Identity fields (kind, mode, dev, ino, size, mtime_ns, ctime_ns) are
 * those of stat(2) (lstat(2) when flags has TL_NOFOLLOW) of the path as
 * the event happened: for a READ, what the process saw; for a WRITE, what
 * was there just BEFORE the process changed it.  atime_ns is set only
 * with TL_ATIME: a READ by a call that gave the program the access time
 * (the stat family; statx when asked for STATX_ATIME; a directory's only
 * when statx asked for it, since every listing after a change moves it),
 * which a read by anyone moves, so it is an input of that command and
 * compared on reuse.  kind TL_ABSENT means the
 * lookup failed with ENOENT or ENOTDIR (a negative entry); other fields
 * are then zero.
 *
 * Event types and what each means:
 *   HELLO     a process image started traced (the preload's constructor):
 *             pid, aux = parent pid, path = its executable's real path
 *             (/proc/self/exe), identity of that file.
 *   BYE       pid is exiting (exit, _exit, _Exit, the last destructor);
 *             aux = exit status (-1 when the preload could not learn it:
 *             an exit() the C library made for the program, as error()
 *             does).
 *   FORK      written by a child of fork() (pid = the child), aux = parent.
 *   EXEC      pid is about to execve path (identity of the file as found);
 *             either a HELLO or an EXECFAIL of the same pid follows.
 *   EXECFAIL  pid's execve returned; aux = errno.
 *   SPAWN     pid started child aux running path (posix_spawn, or the
 *             runner itself with pid 0): a HELLO from aux must follow
 *             (or precede: the child runs, and may write its HELLO, before
 *             posix_spawn has returned to pid).
 *   READ      a path was opened for reading, stat'ed, access'ed,
 *             readlink'ed, or looked up and found absent.  flags
             TL_MAPPED: an object the dynamic loader mapped (a library);
             the runner looks in it, and in every HELLO's executable,
             for system-call instructions of its own (lib/syscan.h),
             except in those flagged TL_SYSTEM: the C library, the
             loader and the tracer, which the tracer told apart by
             address (the object its real functions are in, the
             kernel's AT_BASE, itself), never by name.
 *   LIST      a directory was listed (opendir, scandir, getdents).
 *   WRITE     a path was opened for writing, created, truncated, removed,
 *             renamed from or to, linked, chmod'ed, chown'ed, touched.
 *   OPAQUE    the preload saw something it cannot account for; path =
 *             a one-line reason.  The whole run is opaque.
 *   CLOCK     the process read a clock that runs with time through the
 *             C library: time, gettimeofday, timespec_get, times (its
 *             return is elapsed real time), clock_gettime of any clock but
 *             the CPU-time ones (real-time, monotonic, boot-time, TAI, a
 *             clock device); flags TL_TO_ANSWER when its standard output
 *             or error is the job's own capture pipe (the reading can
 *             reach the answer).  CPU time (clock, getrusage, times'
 *             fields, the CPU-time clocks) is not an event: as and ld
 *             read it at every start, and it reaches no probe's answer.
 *   VALUE     an input that is not a file: path = "name=value" for
 *             uname(2) ("uname=sysname release version machine"),
 *             the host name ("hostname=..."), the CPUs the system has
 *             online ("nprocs=N"), and, written by the runner itself
 *             before it starts the command, the process state the command
 *             starts with ("state=...", lib/pstate.h).  Compared again on
 *             reuse.
 *   IMPURE    the process acted on something outside itself that is not
 *             a file (signalled another process, changed another
 *             process's or the system's state); path = a one-line
 *             reason.  The whole run is impure: never run ahead of need,
 *             never reused.
 *   RANDOM    the process asked the C library for random bytes
 *             (getrandom, getentropy, arc4random*); flags TL_TO_ANSWER as
 *             for CLOCK.  (A read of /dev/random or /dev/urandom is a
 *             READ of that path, and the read set's to judge.)
 *
 * A process the preload cannot load into (a static program, a setuid or
 * setgid one, one started with an environment the preload cannot reach)
 * shows as an EXEC or SPAWN without its HELLO; a process killed before it
 * could say BYE shows as a HELLO or FORK without one.  Either makes the
 * run opaque (readset.h): what is not seen is never guessed.
 */
#ifndef ASYNC_TRACELOG_H
#define ASYNC_TRACELOG_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * The environment variable the preload reads: "FD:DEV:INO" of the log,
 * or "FD:DEV:INO:OUTDEV:OUTINO:ERRDEV:ERRINO" with the st_dev and st_ino
 * of the job's stdout and stderr pipes (0:0 when unknown: then any pipe
 * on descriptor 1 or 2 counts as the job's, for TL_TO_ANSWER), or that
 * and ":RUNNER:PPID": the runner's pid and the pid the command's root
 * process (its parent is RUNNER) is told by getppid(), make's for a job
 * a pool worker runs ahead of need (launch.h, LAUNCH_PPID).  All
 * unsigned decimals; a preload that knows fewer forms stays off.  The preload removes the variable (and itself from
 * LD_PRELOAD) from the program's environment and puts both back, in the
 * same form, into every environment the program passes to exec or
 * posix_spawn; FD is then wherever the log is (the preload moves it off
 * a descriptor the program dup2s onto).
 */
#define TL_ENV "ASYNCCOMPILE_TRACE"
/*
 * An optional suffix of the variable's value, after the numeric fields:
 * the command runs ahead of need (a speculated job).  The preload then
 * refuses, with EPERM, the calls that would act outside the command (an
 * IMPURE event: a signal to another process, a change to the system),
 * since such a run's answer is never used: make runs the command for
 * real when it asks for it.  Passed on like the rest of the variable.
 */
#define TL_ENV_AHEAD ";ahead"
/*
 * The descriptor the runner gives the log (high, out of programs' way);
 * under a lower soft RLIMIT_NOFILE, the highest one below it (launch.c).
 */
#define TL_FD 1021
/* An event (header and path) is at most this long; longer paths: OPAQUE. */
#define TL_MAX_EVENT 8192

enum tl_type {
	TL_HELLO = 1,
	TL_BYE = 2,
	TL_FORK = 3,
	TL_EXEC = 4,
	TL_EXECFAIL = 5,
	TL_SPAWN = 6,
	TL_READ = 7,
	TL_LIST = 8,
	TL_WRITE = 9,
	TL_OPAQUE = 10,
	TL_CLOCK = 11,
	TL_VALUE = 12,
	TL_IMPURE = 13,
	TL_RANDOM = 14,
};

enum tl_kind {
	TL_ABSENT = 0,
	TL_FILE = 1,    /* regular file */
	TL_DIR = 2,
	TL_LINK = 3,    /* symbolic link (only with TL_NOFOLLOW) */
	TL_OTHER = 4,   /* device, fifo, socket */
};

enum tl_flags {
	TL_NOFOLLOW = 1,  /* identity from lstat(2) */
	TL_TO_ANSWER = 2, /* CLOCK, RANDOM: stdout or stderr is the job's pipe */
	TL_ATIME = 4,     /* READ: the program was given atime_ns */
	TL_MAPPED = 8,    /* READ: an object the dynamic loader mapped as code */
	TL_SYSTEM = 16,   /* ... and it is the C library, the loader or the tracer */
};

struct tl_event {
	uint32_t len;     /* the whole event: this header and the path */
	uint8_t type;     /* enum tl_type */
	uint8_t kind;     /* enum tl_kind */
	uint8_t flags;    /* enum tl_flags */
	uint8_t pad0;
	int32_t pid;
	int32_t aux;
	uint32_t mode;    /* st_mode */
	uint32_t pad1;
	uint64_t dev, ino;
	int64_t size, mtime_ns, ctime_ns;
	int64_t atime_ns; /* with TL_ATIME only; else 0 */
};

/*
 * The shared log: TL_SHM_DATA + cap bytes, this header at offset 0, the
 * events from TL_SHM_DATA on.  A writer takes `len` bytes with
 * off = fetch_add(&head, len); when off + len > cap it writes nothing (the
 * log overflowed: head past cap makes the run opaque, never a smaller
 * read set).  Else it copies its events to TL_SHM_DATA + off except the
 * first four bytes (the first event's len), then, after a release fence,
 * those four bytes: a writer killed in between leaves a zero len, which
 * no reader takes for an event (tl_next stops there; the run is opaque).
 */
#define TL_SHM_MAGIC "ACTRLOG1"
#define TL_SHM_DATA 4096
struct tl_shm {
	char magic[8];    /* TL_SHM_MAGIC, no NUL */
	uint64_t cap;     /* bytes of room from TL_SHM_DATA on */
	uint64_t head;    /* bytes taken: the events are [TL_SHM_DATA, +head) */
};

/*
 * Make the memfd fd a fresh shared log with cap bytes of room: its size
 * and header (the runner, lib/launch.c; harnesses).  0, or -1 with errno.
 */
static inline int tl_shm_make(int fd, uint64_t cap)
{
	struct tl_shm h;

	memset(&h, 0, sizeof h);
	memcpy(h.magic, TL_SHM_MAGIC, sizeof h.magic);
	h.cap = cap;
	if (ftruncate(fd, (off_t)(TL_SHM_DATA + cap)) < 0 ||
	    pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
		return -1;
	return 0;
}

/*
 * Whether a shared log's header h (read from a log of `size` bytes now)
 * can be read: NULL, or why the run must be taken as opaque.  The
 * runner decodes [TL_SHM_DATA, TL_SHM_DATA + h->head) with tl_next.
 */
static inline const char *tl_shm_check(const struct tl_shm *h, uint64_t size)
{
	if (memcmp(h->magic, TL_SHM_MAGIC, sizeof h->magic) ||
	    h->cap > UINT64_MAX - TL_SHM_DATA)
		return "the trace log has no header";
	if (size != TL_SHM_DATA + h->cap)
		return "a process wrote its events outside the shared trace log";
	if (h->head > h->cap)
		return "the trace log overflowed";
	return NULL;
}

/*
 * Does ev name code a process mapped (HELLO: its program; a READ with
 * TL_MAPPED: a library), of the kind lib/syscan.h must judge: a file,
 * and not the C library, the loader or the tracer (TL_SYSTEM)?  The one
 * rule for the read set (readset.c) and the runner's scans ahead (run.c).
 */
static inline int tl_code_to_scan(const struct tl_event *ev)
{
	return (ev->type == TL_HELLO || (ev->type == TL_READ && (ev->flags & TL_MAPPED))) &&
	       ev->kind == TL_FILE && !(ev->flags & TL_SYSTEM);
}

/*
 * Step through a log: *off is the offset of the next event (start at 0).
 * Returns 1 with *ev, *path and *plen set, or 0 at the end or at the
 * first malformed event (*off is then left at it; the caller tells the
 * two apart by *off == n).  Nothing in the log is trusted.
 */
static inline int tl_next(const void *log, size_t n, size_t *off, struct tl_event *ev,
			  const char **path, size_t *plen)
{
	const unsigned char *p = (const unsigned char *)log + *off;

	if (*off >= n || n - *off < sizeof *ev)
		return 0;
	memcpy(ev, p, sizeof *ev); /* the log need not be aligned */
	if (ev->len < sizeof *ev || ev->len > TL_MAX_EVENT || ev->len > n - *off)
		return 0;
	*path = (const char *)p + sizeof *ev;
	*plen = ev->len - sizeof *ev;
	*off += ev->len;
	return 1;
}

#endif
