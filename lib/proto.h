/*
 * proto.h - the framed protocol spoken between the plugin, the supervisor
 * and the workers.  PROTOCOL.md is the normative description; the C
 * manual is in three parts, all included here: frame.h (frames), msg.h
 * (the messages frames carry), wire.h (the fields messages are made of).
 * And the one clock every party's times are in.
 */
#ifndef ASYNC_PROTO_H
#define ASYNC_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/buf.h"
#include "lib/frame.h"
#include "lib/msg.h"
#include "lib/strv.h"
#include "lib/wire.h"

/* What HELLO and COLLECT carry: peers that differ do not talk. */
#define PROTO_VERSION 7

/* Current CLOCK_MONOTONIC in nanoseconds. */
int64_t proto_now_ns(void);

#endif
