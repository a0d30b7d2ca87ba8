/*
 * find.c - where the configuration is looked for, in the contract's
 * order, and which file is trusted (config.h: "Finding the file").  The
 * plugin (plugin/request.c) and the user's tools (worker/main.c) both
 * find their configuration here and nowhere else.
 */
#include "config/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/cfg.h"
#include "lib/err.h"
#include "lib/store.h"

const char *config_step_name(enum config_step s)
{
	switch (s) {
	case CONFIG_NAMED: return "named by the caller";
	case CONFIG_MAKE_VAR: return "the make variable ASYNC_COMPILE_CONFIG";
	case CONFIG_ENV: return "the environment variable ASYNC_COMPILE_CONFIG";
	case CONFIG_START_DIR: return "the directory make was started from";
	case CONFIG_USER: return "the user's configuration directory";
	case CONFIG_SYSTEM: return "the system's configuration";
	case CONFIG_DEFAULTS: return "no file: built-in defaults";
	}
	return "unknown";
}

/*
 * Is there something at path?  A dangling link or a loop counts as there
 * (lstat sees the link): loading it says what is wrong, rather than
 * falling back in silence to a file further down.  In the directory make
 * started from, so does a path this user may not search; not in the
 * user's and the system's places (a HOME kept by sudo that this user
 * cannot enter holds no file of this user's).
 */
static int config_there(const char *path, int strict)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return 1;
	return strict && errno != ENOENT && errno != ENOTDIR;
}

/* dir/asynccompile.yaml, or just the name when dir is the current directory */
static char *config_in(const char *dir)
{
	struct stat a, b;
	struct buf p = BUF_INIT;

	if (stat(dir, &a) == 0 && stat(".", &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return cfg_strdup(CONFIG_FILE_NAME);
	buf_addf(&p, "%s/%s", strcmp(dir, "/") ? dir : "", CONFIG_FILE_NAME);
	return buf_detach(&p, NULL);
}

void config_find(const struct config_search *s, struct config_origin *o)
{
	const char *env = getenv("ASYNC_COMPILE_CONFIG");
	char *p;

	o->path = NULL;
	if (s->named && *s->named) {
		o->step = s->named_step;
		o->path = cfg_strdup(s->named);
		return;
	}
	if (env && *env) {
		o->step = CONFIG_ENV;
		o->path = cfg_strdup(env);
		return;
	}
	p = config_in(s->start_dir ? s->start_dir() : ".");
	if (config_there(p, 1)) {
		o->step = CONFIG_START_DIR;
		o->path = p;
		return;
	}
	free(p);
	p = store_user_path("XDG_CONFIG_HOME", ".config", "asynccompile/" CONFIG_FILE_NAME, NULL);
	if (p && config_there(p, 0)) {
		o->step = CONFIG_USER;
		o->path = p;
		return;
	}
	free(p);
	if (config_there(CONFIG_SYSTEM_FILE, 0)) {
		o->step = CONFIG_SYSTEM;
		o->path = cfg_strdup(CONFIG_SYSTEM_FILE);
		return;
	}
	o->step = CONFIG_DEFAULTS;
}

int config_find_load(const struct config_search *s, struct config *c,
		     struct config_origin *o, struct buf *err)
{
	config_find(s, o);
	if (!o->path) {
		config_defaults(c);
		return 0;
	}
	return config_load_file(o->path, c, err);
}

void config_origin_release(struct config_origin *o)
{
	free(o->path);
	o->path = NULL;
}

int config_trusted(const char *path, const struct stat *st, struct buf *err)
{
	uid_t me = geteuid();

	if (st->st_uid != me && !(st->st_uid == 0 && !strcmp(path, CONFIG_SYSTEM_FILE)))
		return err_fail(err, "%s: refused: owned by another user (uid %ld), "
				"not by this one (uid %ld)", path, (long)st->st_uid, (long)me);
	if (st->st_mode & 022)
		return err_fail(err, "%s: refused: group or others may write to it "
				"(chmod go-w %s)", path, path);
	return 0;
}
