package e2e

import (
	"bytes"
	"strings"
	"sync"
)

// syncBuffer is a bytes.Buffer safe for a process and a test at once:
// exec's copier writes a process's log while tests read it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// crashMarkers start what the Go runtime prints when a process dies of a
// panic, a fatal error or a signal (a crash in C code through cgo), and
// the race detector's report in a binary built with it. The runtime's
// report of a bad heap pointer comes before its "fatal error" line and
// names the object, so it starts the excerpt when present.
var crashMarkers = []string{"WARNING: DATA RACE", "panic: ", "fatal error: ", "SIGSEGV", "SIGABRT", "SIGBUS", "unexpected signal",
	"runtime: marked free object", "runtime: pointer ", "runtime: bad pointer"}

// excerpt returns up to n bytes of the log a failed test should show:
// from the first crash marker when the process crashed (the goroutine
// dump after it is long and says little), else the end of the log.
func (l *syncBuffer) excerpt(n int) string {
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
