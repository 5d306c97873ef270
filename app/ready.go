package app

import (
	"net/http"
	"sync"

	"github.com/weftdev/weft/internal/httpapi"
)

// readyPath answers whether this node can take writes, for a readiness
// probe (a Kubernetes readinessProbe, a load balancer's health check).
// /health stays the liveness probe: 200 while the process runs.
const readyPath = "/ready"

// readiness follows the store's failure for GET /ready and hands it on to
// Serve, which stops the process on it.
type readiness struct {
	failed chan error // nil: the store cannot fail for good
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	invalid bool // the database failed and must be opened again
}

func newReadiness(storeFailed <-chan error) *readiness {
	r := &readiness{done: make(chan struct{})}
	if storeFailed == nil {
		return r
	}
	r.failed = make(chan error, 1)
	go func() {
		select {
		case err := <-storeFailed:
			r.mu.Lock()
			r.invalid = true
			r.mu.Unlock()
			r.failed <- err
		case <-r.done:
		}
	}()
	return r
}

// storeFailed gets the store's failure, once; nil (never ready) for a
// store that recovers by itself.
func (r *readiness) storeFailed() <-chan error { return r.failed }

func (r *readiness) isInvalid() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.invalid
}

// close stops following the store, before it closes.
func (r *readiness) close() { r.once.Do(func() { close(r.done) }) }

// notReady is one reason /ready gives.
type notReady struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Done and Total: the replay's progress, in log records (each a batch
	// of call records).
	Done  *uint64 `json:"log_records_done,omitempty"`
	Total *uint64 `json:"log_records_total,omitempty"`
	// Failures: store writes that failed in a row.
	Failures *int `json:"consecutive_failures,omitempty"`
}

// notReady lists why this node cannot take writes now; empty when it can.
// The reasons name states, not the store's errors, which the log has:
// the endpoint needs no key.
func (s *Server) notReady() []notReady {
	var out []notReady
	if s.ready.isInvalid() {
		out = append(out, notReady{Reason: "database_invalidated",
			Message: "the embedded database failed and must be opened again; the process is stopping, and the write-ahead log keeps acknowledged writes"})
	}
	h, ok := s.write.health()
	if !ok {
		return out
	}
	if h.Stopping {
		out = append(out, notReady{Reason: "shutting_down", Message: "the process is shutting down"})
	}
	if h.Replaying {
		out = append(out, notReady{Reason: "replaying_log", Done: &h.ReplayDone, Total: &h.ReplayTotal,
			Message: "storing the write-ahead log of an earlier run; writes get 503 with Retry-After until it is done"})
	}
	if h.StoreDown {
		out = append(out, notReady{Reason: "store_refusing_writes", Failures: &h.Failures,
			Message: "the store takes no writes, not even a probe; acknowledged writes wait in the write-ahead log, which is retried until the store takes them"})
	}
	if h.CheckpointFailed {
		out = append(out, notReady{Reason: "checkpoint_failed",
			Message: "the store's last checkpoint failed; the write-ahead log keeps what it did not make durable until one succeeds"})
	}
	return out
}

// withReady serves GET /ready in front of everything else (it needs no
// key, and the web UI must not take its address): 200 when the node can
// take writes, 503 with the reasons otherwise.
func (s *Server) withReady(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != readyPath || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if reasons := s.notReady(); len(reasons) > 0 {
			httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "reasons": reasons})
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}
