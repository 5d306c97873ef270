package main

import "runtime/debug"

// defaultGoMemoryLimit is the Go heap's soft limit when GOMEMLIMIT is not
// set. Without it the collector lets the heap grow to twice what is live,
// which under an ingest burst put the process over a gigabyte; the
// embedded store's buffer pool (384 MiB) comes on top of it.
const defaultGoMemoryLimit = 512 << 20

// setMemoryLimit applies the default soft limit unless GOMEMLIMIT (which
// the Go runtime reads itself) says otherwise.
func setMemoryLimit(getenv func(string) string) {
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultGoMemoryLimit)
	}
}
