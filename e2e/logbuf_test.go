package e2e

import (
	"bytes"
	"strings"
	"sync"
)

// logBuffer collects a process's stderr. exec's copier writes it while
// the process runs and tests read it meanwhile, so access is locked.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// crashMarkers start what the Go runtime prints when a process dies of a
// panic, a fatal error or a signal (a crash in C code through cgo), and
// the race detector's report in a binary built with it.
var crashMarkers = []string{"WARNING: DATA RACE", "panic: ", "fatal error: ", "SIGSEGV", "SIGABRT", "SIGBUS", "unexpected signal"}

// excerpt returns up to n bytes of the log a failed test should show:
// from the first crash marker when the process crashed (the goroutine
// dump after it is long and says little), else the end of the log.
func (l *logBuffer) excerpt(n int) string {
	s := l.String()
	start := len(s)
	for _, m := range crashMarkers {
		if i := strings.Index(s, m); i >= 0 && i < start {
			start = i
		}
	}
	if start == len(s) {
		start = max(len(s)-n, 0)
	}
	return s[start:min(start+n, len(s))]
}
