/*
 * strv.h - NULL-terminated vectors of malloc'd strings, as wire_get_strv(),
 * launch_environ() and the config build them.
 */
#ifndef ASYNC_STRV_H
#define ASYNC_STRV_H

/* Free every string, then the vector; NULL is fine. */
void strv_free(char **v);
/* A malloc'd copy (NULL: an empty vector); allocation failure aborts. */
char **strv_dup(char *const *v);

#endif
