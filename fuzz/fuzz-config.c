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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, d, back;
	struct buf err = BUF_INIT, out = BUF_INIT;

	config_defaults(&d);
	if (config_load_mem("fuzz.yaml", data, size, &c, &err)) {
		if (!err.len || strncmp((char *)err.data, "fuzz.yaml:", 10) ||
		    memchr(err.data, '\n', err.len) || !config_same(&c, &d) ||
		    strcmp(c.source, d.source))
			abort();
	} else {
		if (err.len)
			abort();
		config_dump(&c, &out);
		if (config_load_mem("dump", out.data, out.len, &back, &err) ||
		    !config_same(&c, &back))
			abort();
		config_release(&back);
	}
	config_release(&c);
	config_release(&d);
	buf_release(&err);
	buf_release(&out);
	return 0;
}
