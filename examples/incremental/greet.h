/* greet.h - the greeting. */
#ifndef GREET_H
#define GREET_H

/* Print "hello, NAME" for NAME without its trailing blanks. */
void greet(const char *name);

#endif
