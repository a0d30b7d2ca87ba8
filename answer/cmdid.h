/*
 * cmdid.h - a command's identity: everything that must be equal for one
 * run's answer to stand for another's (shell, shell flags, directory and
 * command text), encoded with lib/wire.h's field primitives so that equal
 * identities are equal bytes.  The record (record.h) names its entries
 * by it.
 */
#ifndef ASYNC_CMDID_H
#define ASYNC_CMDID_H

#include <stddef.h>

#include "lib/buf.h"

struct cmdid {
	char *shell;
	char **flags;   /* NULL-terminated */
	char *cwd;
	char *command;
};

/* Append the identity's encoding to out. */
void cmdid_put(struct buf *out, const char *shell, char *const *flags,
	       const char *cwd, const char *command);
/* Decode one identity (fields malloc'd).  0, or -1 if malformed. */
int cmdid_get(const void *p, size_t n, struct cmdid *id);
void cmdid_release(struct cmdid *id);

#endif
