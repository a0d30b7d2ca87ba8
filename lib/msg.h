/*
 * msg.h - the messages of the protocol (proto.h): what a frame's payload
 * holds.  Every payload starts with one byte, the message type, followed
 * by that type's fields encoded with the primitives of wire.h.
 * PROTOCOL.md is normative; msg_collect.h has the recipe waits' channel.
 *
 * Nothing here blocks or calls exit().  A decoder that refuses a payload
 * returns -1 and appends one reason to its `err` (err.h); only that
 * failure allocates.  Single-threaded per object.
 */
#ifndef ASYNC_MSG_H
#define ASYNC_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/buf.h"

/* Per-stream output cap allowed by the config (max_output). */
#define PROTO_MAX_OUTPUT ((int64_t)256 << 20)
/*
 * Largest timeout_ms and kill_grace_ms a JOB may carry (about 31 years):
 * deadlines are the monotonic clock in ms plus these, and must not wrap.
 * The configuration itself stops at 24 hours.
 */
#define PROTO_MAX_TIMEOUT_MS ((int64_t)1000000000000)
/* Largest pool a WORKERS message may ask for (the config's own limit). */
#define PROTO_MAX_WORKERS 1024

/*
 * The message types, X(NAME, type byte): MSG_NAME in enum proto_type, and
 * NAME in errors (msgtab.h's msg_type_name).  Which role accepts which is
 * each role's table (msgtab.h).
 */
#define MSG_TYPES(X) \
	X(HELLO, 1)   /* control, both ways: version handshake */ \
	X(JOB, 2)     /* to worker/supervisor: run this job */ \
	X(STARTED, 3) /* from worker: job's process group exists */ \
	X(RESULT, 4)  /* from worker/supervisor: job finished */ \
	X(CANCEL, 5)  /* to worker/supervisor: stop this job (as timeout) */ \
	X(STATS, 6)   /* control: request (empty) / reply (counters) */ \
	X(ERROR, 7)   /* control, from a peer: fatal protocol error text */ \
	X(WORKERS, 8) /* control, to a supervisor: run up to N workers */

enum proto_type {
#define MSG_ENUM_ROW(name, byte) MSG_##name = byte,
	MSG_TYPES(MSG_ENUM_ROW)
#undef MSG_ENUM_ROW
};

/*
 * ERROR and STATS: a type byte, then text to the end of the payload (not
 * NUL-terminated on the wire).  msg_put_text encodes either;
 * msg_get_text gives the text of one (*text points into p, *len bytes),
 * or returns -1 if p is not a message of that type.
 */
void msg_put_text(struct buf *out, uint8_t type, const char *text);
int msg_get_text(const void *p, size_t n, uint8_t type, const char **text, int *len);

/* ---- messages ---- */

struct hello_msg {
	uint32_t version;
	uint32_t workers; /* how many jobs the peer runs at once */
	int32_t pid;      /* the peer's pid (supervisor or worker) */
};

/*
 * The answering side of the handshake (supervisor, worker): the first
 * frame must be a control HELLO of this PROTO_VERSION.  0, with our HELLO
 * (`workers`, our pid) appended to `reply`; or -1 with one reason in err.
 */
int msg_hello_answer(int64_t id, const void *p, size_t n, uint32_t workers, struct buf *reply,
		     struct buf *err);

/*
 * A JOB's head, its first fields after the type byte: all a pool needs
 * of a job it passes on (re-runs, the timeout after a death), read
 * without decoding the rest.
 */
struct job_head {
	uint32_t retries;      /* re-runs allowed after a worker crash */
	int64_t timeout_ms;    /* 0 = none */
};
/* Bytes of a JOB up to the end of its head: type, retries, timeout_ms. */
#define MSG_JOB_HEAD 13

struct job_msg {
	char *shell;           /* e.g. "/bin/sh" */
	char **shellflags;     /* e.g. {"-c", NULL}, split like make does */
	char *command;         /* the command line, launcher already applied */
	char *cwd;             /* directory to run in */
	char **env;            /* "K=V" entries set on top of the inherited env */
	uint8_t env_full;      /* 1: env is the whole environment, nothing inherited */
	unsigned char *input;  /* stdin bytes when has_input, else /dev/null */
	size_t input_len;
	int has_input;
	int64_t timeout_ms;    /* 0 = none (in the head) */
	int64_t kill_grace_ms; /* SIGTERM then SIGKILL after this */
	int64_t max_output;    /* per-stream capture cap in bytes */
	uint32_t retries;      /* re-runs allowed after a worker crash (in the head) */
	/*
	 * Descriptors the command gets besides 0-2, as "N<PATH" (opened for
	 * reading onto fd N) or "N>PATH" (for writing), 3 <= N < 1024: a
	 * sub-make run as a build step gets make's jobserver pipe this way.
	 */
	char **fds;
	/*
	 * 1: when the command ends, also kill what it left running in a
	 * session of its own (daemons); 0: leave those until the worker
	 * ends.  Processes left in the command's own session always go.
	 */
	uint8_t kill_daemons;
	/*
	 * The tracer (readset.h) to preload into the command, an absolute
	 * path, or NULL to run it untraced.  A traced job's RESULT carries
	 * its read set.
	 */
	char *tracer;
	/*
	 * 1: the job runs ahead of need (speculation): its tracer refuses
	 * the calls that would act outside the command (TL_ENV_AHEAD in
	 * lib/tracelog.h).  0 for every job make asked for.
	 */
	uint8_t ahead;
};

/*
 * Statuses a RESULT carries for a command that did not end on its own
 * (PROTOCOL.md, RESULT), the numbers timeout(1) and the shell use.
 */
#define STATUS_TIMED_OUT 124  /* stopped by the job's timeout */
#define STATUS_NOT_RUN 125    /* refused, lost with its workers, or make was exiting */
#define STATUS_CANNOT_RUN 127 /* the command could not be started */
#define STATUS_CANCELLED (128 + 15) /* cancelled before it ran: as if by SIGTERM */

enum result_flags {
	RES_TIMED_OUT = 1 << 0,   /* stopped by the timeout: status 124 */
	RES_CRASHED = 1 << 1,     /* retries exhausted after worker crashes */
	RES_TRUNCATED = 1 << 2,   /* some output dropped at max_output */
	RES_SPAWN_FAILED = 1 << 3,/* could not start the command (status 127) */
	RES_CANCELLED = 1 << 4,   /* stopped by MSG_CANCEL */
};

struct result_msg {
	int32_t status;     /* exit code; 128+N for signal N; 124 timeout */
	uint32_t flags;     /* enum result_flags */
	struct buf out;     /* captured stdout (<= max_output) */
	struct buf err;     /* captured stderr; pool notes appended here */
	/*
	 * The order the command's output arrived in: runs of 5 bytes, the
	 * stream (RES_OUT or RES_ERR) and a u32 count (as wire_put_u32) of its
	 * bytes; they cover a prefix of out and of err (what comes after,
	 * pool notes, has no run).  Empty: no order known.
	 */
	struct buf order;
	/* A traced job's read set (readset.h encoding); empty if untraced. */
	struct buf readset;
	int64_t start_ns;   /* CLOCK_MONOTONIC when the command started */
	int64_t end_ns;     /* CLOCK_MONOTONIC when it was reaped */
	int64_t utime_us, stime_us, maxrss_kb;
	/* the head: set by the pool that passes it on (struct result_head) */
	int32_t worker;     /* index of the worker that ran it */
	uint32_t attempts;  /* 1 + re-runs after worker crashes */
	uint32_t running;   /* see started_msg */
};

/*
 * A RESULT's head, its first fields after the type byte: what the pool
 * that passes a worker's RESULT on sets (result_msg has the same fields).
 */
struct result_head {
	int32_t worker;
	uint32_t attempts;
	uint32_t running;
};
/* Bytes of a RESULT up to the end of its head. */
#define MSG_RESULT_HEAD 13

enum { RES_OUT = 1, RES_ERR = 2 };
/* Append n bytes of `stream` to an order (merging with the last run). */
void msg_result_order_add(struct buf *order, int stream, size_t n);

struct started_msg {
	int32_t pid;  /* the job's process (and process group) id */
	int32_t worker;
	/*
	 * Jobs the pool's workers were running when it handed this one to
	 * a worker, this one included; a worker sends 0 and the pool fills
	 * it in when it passes the message on.
	 */
	uint32_t running;
};

/* Each encoder appends one complete payload (type byte first) to `out`. */
void msg_put_hello(struct buf *out, const struct hello_msg *m);
void msg_put_job(struct buf *out, const struct job_msg *m);
void msg_put_started(struct buf *out, const struct started_msg *m);
void msg_put_result(struct buf *out, const struct result_msg *m);
/* WORKERS: the pool may grow to `workers` (1..PROTO_MAX_WORKERS). */
void msg_put_workers(struct buf *out, uint32_t workers);

/* Message type of a payload, or -1 if empty. */
int msg_type(const void *payload, size_t len);
/*
 * Decoders fill *m (zero it first is not required) and return 0, or -1 with
 * one reason appended to err (err.h; NULL: not wanted) and *m left empty.
 * Only a refusal allocates.  The result must be released with the
 * matching *_release even on success only.
 */
int msg_get_hello(const void *p, size_t n, struct hello_msg *m, struct buf *err);
int msg_get_job(const void *p, size_t n, struct job_msg *m, struct buf *err);
int msg_get_started(const void *p, size_t n, struct started_msg *m, struct buf *err);
int msg_get_result(const void *p, size_t n, struct result_msg *m, struct buf *err);
int msg_get_workers(const void *p, size_t n, uint32_t *workers, struct buf *err);
/*
 * A JOB's head alone, in O(1): for a pool that passes the job on and
 * leaves the rest to the worker's msg_get_job().  0, or -1 with err
 * (wrong type, too short, a timeout out of range) and *h zeroed.
 */
int msg_get_job_head(const void *p, size_t n, struct job_head *h, struct buf *err);
/*
 * Check a RESULT payload as msg_get_result() does, without copying it:
 * for a pool that passes results on.  0, or -1 with err.
 */
int msg_check_result(const void *p, size_t n, struct buf *err);
/*
 * Append the RESULT `p` (checked by msg_check_result) with `h` as its
 * head: its type and h, then p's bytes after its own head.  p is not
 * written to.
 */
void msg_put_result_as(struct buf *out, const struct result_head *h, const void *p, size_t n);
void msg_job_release(struct job_msg *m);
void msg_result_release(struct result_msg *m);
/*
 * The one RESULT of a job that did not run to its end: `m` (unused, or
 * released) gets status and flags, worker -1, both times now, and one
 * line "asynccompile: WHY\n" in err, at most 300 bytes.  The caller may
 * then set attempts and running, and releases it.
 */
void msg_result_fail(struct result_msg *m, int32_t status, uint32_t flags, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
