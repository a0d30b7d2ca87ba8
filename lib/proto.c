/* The protocol's clock: see proto.h. */
#include <time.h>

#include "lib/proto.h"

int64_t proto_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
