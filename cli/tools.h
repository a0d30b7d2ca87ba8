/*
 * tools.h - what the asynccompile command does (asynccompile(1)), one
 * function per option, also reached by asynccompile-worker's older
 * maintenance options (--print-config, --cache-stats, --cache-clear),
 * which are thin aliases: one implementation.
 *
 * Each function writes its report to stdout and returns 0, or returns
 * -1 with one reason appended to err (lib/err.h) for the caller to print
 * with its own name.  `file` is a configuration file named on the
 * command line, or NULL: then the configuration is found as the plugin
 * finds it from the current directory (tools_config()).
 */
#ifndef ASYNC_CLI_TOOLS_H
#define ASYNC_CLI_TOOLS_H

#include "config/config.h"
#include "lib/buf.h"

/* The release (asynccompile.pc.in says the same), for --version. */
#define ASYNC_VERSION "0.1"

/*
 * The configuration the plugin would use, found by the plugin's own
 * search (config.h, "Finding the file"), `file` standing for its
 * make-only step ($(async-config), the make variable); the directory
 * make was started from is this one, or a recipe's top-level make's
 * (lib/startdir.h).  0 (release *c), or -1 with err.
 */
int tools_config(const char *file, struct config *c, struct buf *err);
/*
 * The configuration as YAML; with `origins`, where each value came from
 * and, last, a comment naming the step of the search that found the file.
 */
int tools_print_config(const char *file, int origins, struct buf *err);
/*
 * The store's counts (answer/stats.h), with the size of the cache and of
 * the speculation records.  A stats file that is refused shows zeros; its
 * reason is appended to `warn`.
 */
int tools_show_stats(const char *file, struct buf *warn, struct buf *err);
/* Zero the store's counts. */
int tools_zero_stats(const char *file, struct buf *err);
/* Remove the cache's entries and the speculation records. */
int tools_clear(const char *file, struct buf *err);

#endif
