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
/*
 * Two environments ("NAME=VALUE" vectors): the name of one variable that
 * one has and the other has not, or has with another value, pointing
 * into a or b (its length in *len: the name ends at '=' or the string's
 * end); NULL if they hold the same variables.  Quadratic: for a debug
 * line, not a hot path.  Only the name, never a value, so it can be
 * printed where a value might be a secret.
 */
const char *strv_env_differs(char *const *a, char *const *b, size_t *len);

#endif
