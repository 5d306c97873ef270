package inference

import "sync"

// limiter caps the requests in flight per name: a project, or an API
// key. Names without requests in flight hold no entry, so its memory
// follows the load, not the number of names ever seen.
type limiter struct {
	def      int
	override map[string]int

	mu       sync.Mutex
	inFlight map[string]int
}

func newLimiter(def int, override map[string]int) *limiter {
	return &limiter{def: def, override: override, inFlight: map[string]int{}}
}

func (l *limiter) limit(project string) int {
	if n, ok := l.override[project]; ok {
		return n
	}
	return l.def
}

// acquire takes a slot for a name; ok is false when all are taken.
// release must be called exactly once after a successful acquire.
func (l *limiter) acquire(project string) (release func(), limit int, ok bool) {
	limit = l.limit(project)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[project] >= limit {
		return nil, limit, false
	}
	l.inFlight[project]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.inFlight[project]--; l.inFlight[project] <= 0 {
			delete(l.inFlight, project)
		}
	}, limit, true
}
