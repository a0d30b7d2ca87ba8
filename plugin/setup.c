/*
 * Loading into make: the exported symbols and function registration (the
 * ways the plugin talks back to make are mk.c's).  Only make's thread
 * runs this code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <gnumake.h>

#include "lib/pstate.h"
#include "plugin/funcs.h"
#include "plugin/mk.h"
#include "plugin/shell.h"
#include "plugin/spec.h"
#include "plugin/engine.h"
#include "plugin/fatal.h"
#include "plugin/reexec.h"
#include "plugin/request.h"
#include "plugin/kbuild.h"

__attribute__((visibility("default"))) int plugin_is_GPL_compatible;

/* async-shell's part in what request.c does for every function */
static const struct request_hooks setup_hooks = {
	shell_makefiles_read, spec_drop,
};

/*
 * The end of make.  make 4.3 and 4.4.1 have no hook before exit(): die()
 * (main.c) has waited for its children, given the jobserver's tokens
 * back and printed its last words before the exit handlers run.
 * setup_exit_jobs reports the jobs nobody waited for (engine.h) and ends
 * them; setup_exit_status, the plugin's last handler, then ends make with
 * status 2 if one of those was an error: the one _exit() of make's
 * process in the plugin, after make has ended in its own way.  make's
 * status is not known here (on_exit(3) would give it, but its handlers
 * outlive a dlclose, see below); no error is counted under -n or -q (the
 * only way make exits 1), and a failed make exits 2 anyway.  What the
 * _exit skips are the handlers registered before the load (make's
 * close_stdout) and libc's flush: stdio is flushed here instead.
 *
 * make also runs these handlers when it unloads the plugin to remake it
 * (dlclose runs a library's atexit handlers): then the jobs are ended,
 * as always, but nothing is reported and make goes on.  The two are told
 * apart by the order: at exit the handlers run before the destructor
 * below, at dlclose after it.
 */
static int setup_unwaited, setup_unloading;

__attribute__((destructor)) static void setup_unload(void)
{
	setup_unloading = 1;
}

static void setup_exit_jobs(void)
{
	/* after an error of ours make stops: its jobs were not forgotten */
	if (!setup_unloading && !mk_stopped())
		setup_unwaited = engine_report_unwaited();
	engine_shutdown();
}

static void setup_exit_status(void)
{
	if (setup_unwaited && !setup_unloading) {
		fflush(NULL);
		_exit(2);
	}
}

/* What both entry points do. */
static int setup_load(void)
{
	static int registered;
	const struct config *cfg;

	/* make calls setup again if the .so is remade; the table keeps the functions */
	gmk_add_function("async-compile", funcs_compile, 2, 3, GMK_FUNC_DEFAULT);
	gmk_add_function("async-try", funcs_try, 2, 3, GMK_FUNC_DEFAULT);
	gmk_add_function("async-wait", funcs_wait, 0, 1, GMK_FUNC_DEFAULT);
	gmk_add_function("async-config", funcs_config, 1, 1, GMK_FUNC_DEFAULT);
	gmk_add_function("async-stats", funcs_stats, 0, 1, GMK_FUNC_DEFAULT);
	gmk_add_function("async-drop", funcs_drop, 1, 1, GMK_FUNC_DEFAULT);
	gmk_add_function("async-shell", shell_func, 0, 1, GMK_FUNC_DEFAULT);
	gmk_add_function("async-compile-internal-read", shell_read_func, 0, 0, GMK_FUNC_DEFAULT);
	gmk_add_function("async-compile-internal-unwaited", funcs_unwaited, 1, 1, GMK_FUNC_DEFAULT);
	/* the internal value function and the variables that call functions */
	mk_setup();
	/* exit handlers run last first: make's signal handlers come back last */
	if (!registered++ && !atexit(setup_exit_status) && !atexit(fatal_release))
		atexit(setup_exit_jobs);
	/*
	 * Nothing is started here: no pool, thread, store or signal handler
	 * until a job or a speculation needs one (engine_start), so a make
	 * that queues nothing pays for the load and little else.
	 */
	reexec_init();
	/* make's state is what every command it starts gets (lib/pstate.h) */
	pstate_hold();
	request_load(&setup_hooks);
	shell_load();
	/* a trace asked for: sub-makes may write to it before our first job */
	cfg = request_config_at_load();
	if (cfg && !request_disabled())
		engine_trace_begin(cfg->trace);
	if (registered == 1)
		atexit(shell_exit); /* runs before engine_shutdown */
	return 1;
}

/*
 * `load asynccompile.so`: the make functions.  `load
 * asynccompile.so(asynccompile_kbuild_gmk_setup)`, asynccompile-kbuild.mk's
 * load: the same, plus Kbuild's probe macros through async-shell
 * (kbuild.h) and the answer cache on unless a configuration file says
 * otherwise.
 */
#ifdef GMK_ABI_VERSION
#define SETUP_ARGS unsigned int abi, const gmk_floc *floc
#define SETUP_UNUSED (void)abi; (void)floc
#else
#define SETUP_ARGS const gmk_floc *floc
#define SETUP_UNUSED (void)floc
#endif

__attribute__((visibility("default"))) int asynccompile_gmk_setup(SETUP_ARGS);
int asynccompile_gmk_setup(SETUP_ARGS)
{
	SETUP_UNUSED;
	return setup_load();
}

__attribute__((visibility("default"))) int asynccompile_kbuild_gmk_setup(SETUP_ARGS);
int asynccompile_kbuild_gmk_setup(SETUP_ARGS)
{
	SETUP_UNUSED;
	config_default_cache(1);
	kbuild_setup();
	return setup_load();
}
