package wal

import (
	"os"
	"syscall"
)

// fdatasync flushes the file's data (and the size change) without its
// other metadata, which is all a reader after a crash needs.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
