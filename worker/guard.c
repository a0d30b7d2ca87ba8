/*
 * guard.c - the token guard: gives back the jobserver tokens make held
 * when that make image ends without giving them back itself (SIGKILL,
 * which runs no handler).  plugin/guard.h says why and when the plugin
 * starts it.
 *
 * Descriptors: 0, the read end of a pipe whose only write end make
 * holds (close-on-exec): it ends when that make image ends, by death
 * or by exec; 1, a pipe the plugin reads to see this process end; 3,
 * the memfd holding make's record of held tokens (lib/heldtok.h); 4, a
 * read end of make's jobserver (its pipe, or the fifo), through which a
 * write end is opened only to give tokens back: a write end held all
 * along would keep the top-level make from seeing EOF when it drains.
 *
 * At the end of stdin every slot the record still fills is emptied by
 * the same atomic exchange make's side uses (so a token make gave back
 * itself, or its fatal signal handler did, is not given again), and
 * those tokens are written back.  After a re-exec too: the record says
 * it is guarded, so the new image leaves the tokens of its copy to us
 * (plugin/reexec.c).  The plugin may also close stdin while make lives
 * on (its jobserver changed): the record holds nothing then, and it
 * waits for this process to end before it fills the record again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/heldtok.h"
#include "worker/diag.h"
#include "worker/guard.h"

int guard_main(long pid)
{
	struct stat st;
	char *map, *rec, *slots, buf[64];
	long rpid;
	unsigned long long start;
	unsigned char tok[HELDTOK_MAX];
	size_t n;
	ssize_t r;
	int fd;

	if (fstat(3, &st) < 0 || st.st_size < 2 ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0)) ==
		    MAP_FAILED) {
		diag_warn("guard: cannot map make %ld's record of tokens:", pid);
		return 1;
	}
	close(3);
	/* a byte of slack may come first (plugin/reexec.c) */
	rec = map[0] ? map : map + 1;
	if (!memchr(rec, 0, (size_t)st.st_size - (size_t)(rec - map)) ||
	    !(slots = heldtok_parse(rec, &rpid, &start)) || rpid != pid ||
	    ((uintptr_t)slots & 1) || strlen(slots) < 2 * HELDTOK_MAX) {
		diag_warn("guard: no record of tokens of make %ld", pid);
		return 1;
	}
	while ((r = read(0, buf, sizeof buf)) != 0)
		if (r < 0 && errno != EINTR)
			break;
	n = heldtok_take_all((uint16_t *)(void *)slots, tok);
	if (!n)
		return 0;
	/* a new write end of the jobserver: opened through our read end */
	fd = open("/proc/self/fd/4", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || heldtok_write(fd, tok, n) < 0) {
		diag_warn("guard: could not give back %zu jobserver token(s) of make %ld:", n,
			  pid);
		return 1;
	}
	close(fd);
	return 0;
}
