/*
 * $(async-shell COMMAND): a $(shell) whose commands run ahead of need.
 *
 * Every command runs traced (lib/readset.h): what it read, listed,
 * looked up in vain, ran and wrote.  An answer stands for a later call
 * only if its run was pure, the call's environment digest is the run's,
 * and every path of its read set still has the identity the run saw
 * (readset_check(), on every reuse).  Three layers, each bound by that:
 *  - memo: the same command identity (record.h: shell, flags, directory,
 *    text) asked again in one make process;
 *  - speculation: the commands one run asked for while it read its
 *    makefiles are recorded, with their read sets, in the per-user store
 *    (store.h) under a key naming the makefiles, goals and command-line
 *    variables; the next run with that key queues, at load and within
 *    -jN, those whose recorded run was pure and whose read set still
 *    holds, and a call whose identity equals a speculated job's takes
 *    that job's answer if the job's own read set holds at that moment;
 *  - everything else runs when asked, in make's process.
 * Speculated jobs nobody asked for are cancelled once the makefiles have
 * been read: make expands $(GNUMAKEFLAGS) right after reading them (both
 * 4.3 and 4.4.1, main.c), so at load that variable gets a call to an
 * internal function appended; a recipe-time call or exit also ends it.
 *
 * This file holds the function itself, the memo and the direct run;
 * speculation and the record are spec.c's, the store, the answer cache
 * and the tracer answer.c's.  Make's thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answer/record.h"
#include "answer/stats.h"
#include "lib/launch.h"
#include "lib/readset.h"
#include "lib/run.h"
#include "lib/store.h"
#include "plugin/answer.h"
#include "plugin/engine.h"
#include "plugin/fatal.h"
#include "plugin/job.h"
#include "plugin/log.h"
#include "plugin/mk.h"
#include "plugin/output.h"
#include "plugin/request.h"
#include "plugin/shell.h"
#include "plugin/spec.h"

#define MEMO_SIZE 1024

struct memo {
	struct buf id;
	uint64_t h;
	int status;
	char *value;            /* the folded result */
	struct buf rs;          /* its read set: checked on every hit */
	int64_t ran_ns;         /* how long its run took: what a hit saves */
	size_t seen;            /* what spec_note() returned for it, or 0 */
	struct memo *next;
};

static struct {
	int loaded;             /* shell_load ran */
	struct memo *memo[MEMO_SIZE];
	unsigned long misses, memo_hits, stale;
	/* calls the cache answered at the call (spec.c counts those it answered at load) */
	unsigned long cache_hits;
} shell_state;

static struct memo *shell_memo_find(const struct buf *id, uint64_t h)
{
	for (struct memo *m = shell_state.memo[h % MEMO_SIZE]; m; m = m->next)
		if (m->h == h && m->id.len == id->len && !memcmp(m->id.data, id->data, id->len))
			return m;
	return NULL;
}

/* The identity of COMMAND as make would run it now. */
static void shell_identity(const char *command, struct buf *id, uint64_t *h)
{
	char *sh, **flags;

	request_make_shell(&sh, &flags);
	cmdid_put(id, sh, flags, request_cwd(), command);
	*h = store_hash(id->data, id->len, STORE_HASH_INIT);
	strv_free(flags);
	free(sh);
}

/*
 * The environment of an async-shell command asked for now: what make's
 * $(shell) would give it (mk_shell_environ(): make 4.4 adds the
 * makefile's exports, MAKELEVEL and MAKEFLAGS), then the config env on
 * top.  Malloc'd strings; strv_free it.
 */
static char **shell_call_env(const struct config *c)
{
	char **v = mk_shell_environ();
	size_t n = 0, m = 0;

	while (v[n])
		n++;
	while (c->env && c->env[m])
		m++;
	v = realloc(v, (n + m + 1) * sizeof *v);
	if (!v)
		abort();
	for (size_t k = 0; k < m; k++) {
		const char *e = c->env[k];
		size_t len = strcspn(e, "="), i;

		for (i = 0; i < n; i++)
			if (!strncmp(v[i], e, len) && v[i][len] == '=')
				break;
		if (!e[len]) { /* "K": unset K */
			if (i < n) {
				free(v[i]);
				memmove(v + i, v + i + 1, (n-- - i) * sizeof *v);
			}
			continue;
		}
		if (i < n)
			free(v[i]);
		else
			n++;
		if (!(v[i] = strdup(e)))
			abort();
	}
	v[n] = NULL;
	return v;
}

void shell_load(void)
{
	char *old;

	if (shell_state.loaded++)
		return;
	log_debug_init();
	/*
	 * The end-of-parse hook.  The value make decodes is unchanged (the
	 * function expands to nothing); make sets the variable to "" itself
	 * right afterwards.  A makefile that assigns GNUMAKEFLAGS with = or
	 * := after the load drops the hook: speculation then ends at the
	 * first recipe-time call or at exit.
	 */
	old = mk_expand("$(if $(filter undefined,$(origin GNUMAKEFLAGS)),,$(value GNUMAKEFLAGS))");
	if (!old[strcspn(old, "#\\\n")]) {
		struct buf line = BUF_INIT;

		buf_addf(&line, "GNUMAKEFLAGS = %s$(async-compile-internal-read )", old);
		mk_eval((char *)line.data);
		buf_release(&line);
	}
	free(old);
	spec_start();
}

char *shell_read_func(const char *nm, unsigned int argc, char **argv)
{
	(void)nm;
	(void)argc;
	(void)argv;
	mk_check_aliases();
	shell_makefiles_read();
	return NULL;
}

void shell_makefiles_read(void)
{
	engine_makefiles_read();
	spec_end();
}

/* ASYNC_COMPILE_DEBUG's one line for this make (log.h) */
static void shell_debug_summary(void)
{
	struct spec_stats sp;
	struct answer_stats an;
	struct buf b = BUF_INIT;
	unsigned long calls, cached;

	if (!log_debugging())
		return;
	spec_stats(&sp);
	answer_stats(&an);
	cached = shell_state.cache_hits + sp.cached;
	calls = shell_state.memo_hits + cached + sp.hits + shell_state.misses;
	buf_addf(&b, "%lu call%s: %lu from the cache, %lu by speculation, %lu from the memo, %lu run",
		 calls, calls == 1 ? "" : "s", cached, sp.hits,
		 shell_state.memo_hits, shell_state.misses);
	if (sp.speculated)
		buf_addf(&b, " (%lu speculated, %lu unused)", sp.speculated, sp.unused);
	/*
	 * A lookup the cache missed can still be answered (by speculation),
	 * so "no misses" alone would hide a cache that never hits: a new
	 * variable in the environment misses every entry (t4086).  Only
	 * async-shell's lookups: a probe's are not this line's.
	 */
	if (an.shell_misses)
		buf_addf(&b, " (the cache missed %lu lookup%s)", an.shell_misses,
			 an.shell_misses == 1 ? "" : "s");
	log_debug_summary(calls, (char *)b.data);
	buf_release(&b);
}

void shell_exit(void)
{
	shell_makefiles_read();
	answer_exit();
	shell_debug_summary();
}

/* make's .SHELLSTATUS, with make's own origin for it */
static void shell_set_status(int status)
{
	char line[64];

	snprintf(line, sizeof line, "override .SHELLSTATUS := %d", status);
	mk_eval(line);
}

/* make before 4.4, whose $(shell) treats status 127 as a failed exec */
static int shell_make_43(void)
{
	static int old = -1;

	if (old < 0) {
		char *v = mk_expand("$(MAKE_VERSION)");
		int major = 0, minor = 0;

		sscanf(v, "%d.%d", &major, &minor);
		old = major < 4 || (major == 4 && minor < 4);
		free(v);
	}
	return old;
}

static void shell_direct_pid(void *ctx, pid_t pid)
{
	(void)ctx;
	fatal_child(pid);
}

/*
 * A command run in make's process runs as $(shell) runs one: in make's
 * process group, so that Ctrl-C or a signal to the group ends it, and
 * known to make's fatal-signal handler for a signal to make alone.
 */
static const struct run_hooks shell_direct_hooks = {
	.watch_fd = { -1, -1, -1, -1 },
	.job_pid = shell_direct_pid,
	.callers_group = 1,
};

void shell_run_direct(const struct job_msg *msg, struct result_msg *res)
{
	fatal_init(); /* a signal to make alone is passed on to it */
	run_job(msg, &shell_direct_hooks, res);
}

/* The command now, in make's process, as $(shell) runs it, but traced. */
static struct job *shell_run_now(const struct config *cfg, const struct buf *id, char **envp,
				  uint64_t env)
{
	struct cmdid c;
	struct job *j = calloc(1, sizeof *j);

	if (!j || cmdid_get(id->data, id->len, &c) < 0)
		abort();
	j->kind = JOB_SHELL;
	answer_count(cfg, j, c.shell, c.flags, c.command, NULL, NULL, env);
	if (j->cached) {
		shell_state.cache_hits++;
	} else {
		/*
		 * The pool would only add its hops to make's wait.  The
		 * runner is the workers' own, so the command gets what a
		 * pool job gets (launch.h, run.h).
		 */
		struct job_msg msg;

		request_job_msg(&msg, c.shell, c.flags, c.cwd, c.command, NULL);
		msg.tracer = (char *)answer_tracer();
		msg.env = envp;
		msg.env_full = 1;
		shell_run_direct(&msg, &j->res);
		answer_keep(j);
		answer_ran(j, 1);
		shell_state.misses++;
		j->ran_ns = answer_run_ns(j);
		j->cached = 1; /* done: nothing to wait for */
	}
	cmdid_release(&c);
	return j;
}

/*
 * The result text of a finished command, as $(shell) makes it (malloc'd);
 * its stderr goes to make's.  make 4.3's $(shell) takes 127 from a shell
 * that exited normally for a failed exec: what the command printed goes
 * to stderr and the result is empty (4.4 dropped that).
 */
static char *shell_value(const struct result_msg *r)
{
	char *v;

	if (r->status == STATUS_CANNOT_RUN && !(r->flags & RES_CANCELLED) && shell_make_43()) {
		if (r->out.len)
			mk_print(2, r->out.data, r->out.len);
		if (!(v = strdup("")))
			abort();
	} else {
		v = output_fold(r->out.data, r->out.len);
	}
	if (r->err.len)
		mk_print(2, r->err.data, r->err.len);
	return v;
}

/* ASYNC_COMPILE_DISABLE: $(shell) itself, but for the config env (no memo, no tracer) */
static char *shell_plain(const char *command, char **envp)
{
	struct job_msg msg;
	struct result_msg res;
	char *sh, **flags, *v, *r;

	request_make_shell(&sh, &flags);
	request_job_msg(&msg, sh, flags, request_cwd(), command, NULL);
	msg.env = envp;
	msg.env_full = 1;
	shell_run_direct(&msg, &res);
	shell_state.misses++;
	v = shell_value(&res);
	shell_set_status(res.status);
	msg_result_release(&res);
	strv_free(flags);
	free(sh);
	r = mk_result(v);
	free(v);
	return r;
}

char *shell_func(const char *nm, unsigned int argc, char **argv)
{
	struct situation sit;
	struct buf id = BUF_INIT;
	struct memo *m;
	struct job *j;
	uint64_t h, env, ran_env;
	char **envp, **ran;

	/* the pool is for speculation; a call runs in make's process */
	const struct config *cfg = request_prepare(nm, &sit, 0);

	if (request_disabled()) {
		char *r;

		envp = shell_call_env(cfg);
		r = shell_plain(argc ? argv[0] : "", envp);
		strv_free(envp);
		return r;
	}
	shell_identity(argc ? argv[0] : "", &id, &h);
	/* once per call, as $(shell) builds it once: it can run functions */
	envp = shell_call_env(cfg);
	env = launch_env_digest(envp);
	m = shell_memo_find(&id, h);
	if (m && answer_holds(&m->rs, env, "memo not used")) {
		shell_state.memo_hits++;
		answer_tally_hit(STATS_MEMO_HITS, m->ran_ns);
		buf_release(&id);
		strv_free(envp);
		shell_set_status(m->status);
		return mk_result(m->value);
	}
	if (m)
		shell_state.stale++;
	j = spec_take(&id, h, &ran, &ran_env);
	if (j)
		j = spec_answer(j, ran, ran_env, envp, env);
	if (!j)
		j = shell_run_now(cfg, &id, envp, env);
	if (!m) {
		m = calloc(1, sizeof *m);
		if (!m)
			abort();
		m->id = id;
		m->h = h;
		m->next = shell_state.memo[h % MEMO_SIZE];
		shell_state.memo[h % MEMO_SIZE] = m;
	} else {
		buf_release(&id);
		free(m->value);
	}
	m->status = j->res.status;
	m->ran_ns = answer_run_ns(j);
	/* an answer that cannot vouch for itself is used once, never again */
	buf_reset(&m->rs);
	if (readset_verdict(j->res.readset.data, j->res.readset.len) == RS_PURE)
		buf_add(&m->rs, j->res.readset.data, j->res.readset.len);
	m->value = shell_value(&j->res);
	m->seen = spec_note(m->seen, &m->id, &j->res.readset, envp);
	strv_free(envp);
	job_free(j);
	shell_set_status(m->status);
	return mk_result(m->value);
}

void shell_stats(struct buf *b)
{
	struct spec_stats sp;
	struct answer_stats an;

	spec_stats(&sp);
	answer_stats(&an);
	/* memo_stale stays last: tests anchor on it */
	buf_addf(b, " paths_looked=%lu paths_reused=%lu"
		 " speculated=%lu spec_hits=%lu spec_misses=%lu spec_unused=%lu memo_hits=%lu"
		 " cache_hits=%lu cache_misses=%lu spec_unproven=%lu spec_rejected=%lu memo_stale=%lu",
		 an.looked, an.reused,
		 sp.speculated, sp.hits, shell_state.misses, sp.unused, shell_state.memo_hits, an.hits, an.misses,
		 sp.unproven, sp.rejected, shell_state.stale);
}
