/*
 * rawread FILE: print FILE, opened and read with the program's own
 * `syscall` instructions instead of the C library's open and read: a
 * dynamically linked program whose reads the tracer cannot see (Go's
 * runtime does the same).  lib/syscan.c must find the instruction and
 * make the run opaque.
 */
#include "rawsys.h"

static long rawread_sys(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

int main(int argc, char **argv)
{
	return argc == 2 ? rawsys_print(rawread_sys, argv[1]) : 2;
}
