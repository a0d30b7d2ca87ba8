/*
 * fuzz-config.c - libFuzzer target for the YAML configuration loader.
 *
 * Beyond "no crash, no leak, no UB" it checks the module's promises: a
 * rejection is one line prefixed with the file name and leaves exactly the
 * defaults, and an accepted config survives config_dump() -> reload.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_vec_equal(char **a, char **b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b))
			return 0;
	return !*a && !*b;
}

static int fuzz_same(const struct config *a, const struct config *b)
{
	return a->workers == b->workers && a->start_method == b->start_method &&
		a->warm == b->warm && a->timeout_ms == b->timeout_ms &&
		a->kill_grace_ms == b->kill_grace_ms && a->retries == b->retries &&
		fuzz_vec_equal(a->launcher, b->launcher) && fuzz_vec_equal(a->env, b->env) &&
		a->echo == b->echo && a->progress == b->progress &&
		!strcmp(a->trace, b->trace) && a->max_output == b->max_output &&
		a->speculate == b->speculate && !strcmp(a->cache_dir, b->cache_dir) &&
		a->cache == b->cache && a->cache_max_age_ms == b->cache_max_age_ms &&
		a->cache_content == b->cache_content;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, d, back;
	struct buf err = BUF_INIT, out = BUF_INIT;

	config_defaults(&d);
	if (config_load_mem("fuzz.yaml", data, size, &c, &err)) {
		if (!err.len || strncmp((char *)err.data, "fuzz.yaml:", 10) ||
		    memchr(err.data, '\n', err.len) || !fuzz_same(&c, &d) ||
		    strcmp(c.source, d.source))
			abort();
	} else {
		if (err.len)
			abort();
		config_dump(&c, &out);
		if (config_load_mem("dump", out.data, out.len, &back, &err) ||
		    !fuzz_same(&c, &back))
			abort();
		config_release(&back);
	}
	config_release(&c);
	config_release(&d);
	buf_release(&err);
	buf_release(&out);
	return 0;
}
