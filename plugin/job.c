/*
 * job.c - what a job owns and what kind it is (job.h).  Whichever thread
 * owns the job (job.h says which) may call these.
 */
#include <stdlib.h>

#include "plugin/job.h"

void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->name);
	free(j->command);
	free(j->where);
	buf_release(&j->payload);
	buf_release(&j->cache_key);
	msg_result_release(&j->res);
	free(j);
}

void job_encode(struct job *j, const struct job_msg *m)
{
	buf_reset(&j->payload);
	msg_put_job(&j->payload, m);
	j->retries = m->retries;
	j->timeout_ms = m->timeout_ms;
}

int job_internal(const struct job *j)
{
	return j->kind == JOB_SHELL || j->kind == JOB_SPEC;
}
