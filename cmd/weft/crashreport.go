package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
)

// CrashLogName is the file in the data directory that keeps the runtime's
// report of every fatal error (a panic nobody recovered, a fault in C code
// through cgo, heap corruption), after the same report on stderr.
const CrashLogName = "crash.log"

// keepCrashReports makes a crash leave its whole report: the stacks of
// every goroutine, not only the one that failed, unless GOTRACEBACK says
// otherwise (GOTRACEBACK=crash also dumps core where the system keeps
// cores), and a copy appended to CrashLogName in dataDir, so that a
// supervisor that restarts the process, or a log pipeline that keeps only
// the last lines, cannot lose the cause.
func keepCrashReports(dataDir string, getenv func(string) string) error {
	if getenv("GOTRACEBACK") == "" {
		debug.SetTraceback("all")
	}
	if dataDir == "" {
		return nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("crash log: %w", err)
	}
	path := filepath.Join(dataDir, CrashLogName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("crash log: %w", err)
	}
	defer f.Close() // the runtime keeps its own descriptor
	if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
		return fmt.Errorf("crash log %s: %w", path, err)
	}
	return nil
}
