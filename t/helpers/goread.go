// goread FILE: print FILE, read with os.ReadFile.  A cgo program: it is
// dynamically linked and loads the C library (and the tracer), but Go
// makes its own system calls, so the read never goes through a hooked
// function.  It ends through the C library's exit, as a cgo program may
// (Go's own exit skips the tracer's BYE, which alone made such a run
// opaque): the tracer sees its whole life, and only lib/syscan.c, which
// knows Go by its build-id note or sections, keeps the run from looking
// pure with an empty read set.
package main

// #include <stdlib.h>
import "C"

import (
	"os"
)

func main() {
	// one call through cgo, so that the C library is really used
	C.free(C.malloc(1))
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	os.Stdout.Write(b)
	C.exit(0)
}
