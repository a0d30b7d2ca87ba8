/*
 * cfg.h - private to config/: the helpers its three files share (cfg.c).
 * A load in progress carries where its messages go; every message about
 * the file is one line, "NAME:LINE:COLUMN: message" (err.h).
 */
#ifndef ASYNC_CONFIG_CFG_H
#define ASYNC_CONFIG_CFG_H

#include <stddef.h>
#include <yaml.h>

#include "lib/buf.h"

/* One load in progress: where messages go and what they are prefixed with. */
struct cfg_ctx {
	const char *name;
	struct buf *err;
	yaml_document_t *doc;
};

/* Append "NAME:LINE:COLUMN: message" (1-based) to x->err; returns -1. */
int cfg_fail(struct cfg_ctx *x, const yaml_mark_t *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* User text made safe for a one-line message (escaped, bounded); returns out. */
const char *cfg_show(char *out, size_t size, const char *s, size_t n);
/* "a sequence" / "a mapping" for messages about non-scalar nodes. */
const char *cfg_kind(const yaml_node_t *n);
/* A plain empty, ~ or null scalar: YAML's way of writing nothing. */
int cfg_is_null(const yaml_node_t *n);

/* Allocation that aborts on failure, like buf.c. */
void *cfg_calloc(size_t n, size_t size);
char *cfg_strdup(const char *s);

#endif
