/*
 * heldtok.h - the record of the jobserver tokens one make process holds
 * for its jobs, one string:
 *
 *     ASYNCCOMPILE_HELD_TOKENS=PID.START:SLOTSG
 *
 * SLOTS is HELDTOK_MAX pairs of characters, one per token held: its
 * byte in hex, or "--" for a free slot; each pair is one 2-aligned
 * 16-bit word, changed atomically.  Whoever empties a slot (an atomic
 * exchange or compare-and-swap to HELDTOK_EMPTY) gives that token back,
 * nobody else: so no token goes back twice.  G is HELDTOK_GUARDED while
 * a guard process holds the record (it gives back what is left when
 * make's image ends), else '-'; a record without G is not guarded.
 *
 * Written by the plugin in make (plugin/reexec.c says where the record
 * lives and who empties it: the plugin itself, its fatal signal handler,
 * the image a re-exec starts, and the guard of worker/guard.c once make
 * is gone).  Everything here but heldtok_proc is async-signal-safe.
 */
#ifndef ASYNC_HELDTOK_H
#define ASYNC_HELDTOK_H

#include <stddef.h>
#include <stdint.h>

#define HELDTOK_NAME "ASYNCCOMPILE_HELD_TOKENS"
#define HELDTOK_MAX 256
#define HELDTOK_EMPTY 0x2d2d /* "--" in either byte order */
#define HELDTOK_GUARDED 'g'

/* The slot word that records token `tok`. */
uint16_t heldtok_pair(unsigned char tok);
/* Two characters of a slot: 1 and *tok for a token, 0 free ("--"), -1 neither. */
int heldtok_unpair(const char c[2], unsigned char *tok);
/*
 * The slots of the record text `rec` (from HELDTOK_NAME on), with the
 * PID and START it names; NULL if rec is not one.
 */
char *heldtok_parse(char *rec, long *pid, unsigned long long *start);
/* Does the record whose SLOTS (and G) start at `slots` say it is guarded? */
int heldtok_guarded(const char *slots);
/*
 * Empty every slot (atomically: each word once) and put the bytes of
 * those that held a token into tok[HELDTOK_MAX]; their number.
 */
size_t heldtok_take_all(uint16_t *slots, unsigned char *tok);
/* Write the n bytes to fd, EINTR retried.  0, or -1 if one did not go. */
int heldtok_write(int fd, const unsigned char *tok, size_t n);
/*
 * Process `pid`'s state letter, kernel flags and start time (clock ticks
 * since boot), from /proc/PID/stat.  0, or -1 if it is gone.
 */
int heldtok_proc(long pid, char *state, unsigned long *flags, unsigned long long *start);

#endif
