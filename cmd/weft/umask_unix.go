//go:build unix

package main

import "syscall"

// privateFiles makes every file and directory the process creates from
// now on readable by its owner alone (umask 077). Weft's own files are
// created 0600 already, but the stores create files of their own (DuckDB's
// database and WAL files come out 0644 under the usual umask 022), and an
// operator may have made the data directory open to all: this one call,
// before anything is opened, covers them all, so calls, keys, secrets and
// files are never readable by other users of the machine.
func privateFiles() { syscall.Umask(0o077) }
