/* A command's identity and its encoding: see cmdid.h. */
#include <stdlib.h>
#include <string.h>

#include "answer/cmdid.h"
#include "lib/strv.h"
#include "lib/wire.h"

void cmdid_put(struct buf *out, const char *shell, char *const *flags,
	       const char *cwd, const char *command)
{
	wire_put_str(out, shell);
	wire_put_strv(out, flags);
	wire_put_str(out, cwd);
	wire_put_str(out, command);
}

void cmdid_release(struct cmdid *id)
{
	free(id->shell);
	strv_free(id->flags);
	free(id->cwd);
	free(id->command);
	memset(id, 0, sizeof *id);
}

int cmdid_get(const void *p, size_t n, struct cmdid *id)
{
	struct wire_reader r;

	wire_reader_init(&r, p, n);
	id->shell = wire_get_str(&r);
	id->flags = wire_get_strv(&r);
	id->cwd = wire_get_str(&r);
	id->command = wire_get_str(&r);
	if (r.failed || r.left || !id->shell || !id->flags || !id->cwd || !id->command) {
		cmdid_release(id);
		return -1;
	}
	return 0;
}
