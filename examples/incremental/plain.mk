# examples/incremental/plain.mk - the stock makefile Makefile stands in
# for: a pattern rule per object, headers tracked by -MMD.
#
#     make -C examples/incremental -f plain.mk -j4

CC ?= cc
CFLAGS ?= -O2 -Wall
SRCS := main.c greet.c count.c util.c
OBJS := $(SRCS:.c=.o)
DEPS := $(SRCS:.c=.d)

prog: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $(OBJS)

%.o: %.c
	$(CC) $(CFLAGS) -MMD -MP -Wa,--noexecstack -c $< -o $@

-include $(DEPS)

.PHONY: clean
clean:
	rm -f prog $(OBJS) $(DEPS)
