package httpapi

import (
	"net/http"
	"strings"

	"golang.org/x/sync/semaphore"
)

// unknownBodyBytes is what a body of undeclared length (chunked) reserves.
const unknownBodyBytes = 1 << 20

// encodedExpansion is how much more a compressed body is counted for: it
// grows when decoded.
const encodedExpansion = 4

// Inflight bounds the request body bytes being read and decoded at once
// across every request of a listener, so that many large requests at
// the same moment cannot take more memory than that between them: each
// request's own bound (max_request_bytes) does not add up to a total.
type Inflight struct {
	sem *semaphore.Weighted
	max int64
}

// NewInflight bounds in-flight body bytes to max.
func NewInflight(max int64) *Inflight {
	return &Inflight{sem: semaphore.NewWeighted(max), max: max}
}

// Limit wraps next: a request with a body reserves its declared length (a
// compressed one four times that, one of unknown length 1 MiB, never more
// than the whole bound) while it is handled. When that much is not free
// it is answered 429 with Retry-After at once. Paths starting with one of
// streamed (file uploads, which go to disk as they arrive) are not counted.
func (f *Inflight) Limit(next http.Handler, streamed ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := f.reservation(r)
		if n == 0 || hasPrefix(r.URL.Path, streamed) {
			next.ServeHTTP(w, r)
			return
		}
		if !f.sem.TryAcquire(n) {
			w.Header().Set("Retry-After", "1")
			WriteJSON(w, http.StatusTooManyRequests, map[string]string{
				"reason": "too many request bytes are being decoded at once (connections.max_inflight_bytes); retry later"})
			return
		}
		defer f.sem.Release(n)
		next.ServeHTTP(w, r)
	})
}

// Reserve takes n bytes (at most the whole bound) for work that is not an
// HTTP request, such as a decoded gRPC message; ok is false when they are
// not free now. A nil Inflight reserves nothing.
func (f *Inflight) Reserve(n int64) (release func(), ok bool) {
	if f == nil {
		return func() {}, true
	}
	n = max(min(n, f.max), 1)
	if !f.sem.TryAcquire(n) {
		return nil, false
	}
	return func() { f.sem.Release(n) }, true
}

func (f *Inflight) reservation(r *http.Request) int64 {
	if r.Body == nil || r.Body == http.NoBody || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return 0
	}
	n := r.ContentLength
	if n < 0 {
		n = unknownBodyBytes
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		n *= encodedExpansion
	}
	return max(min(n, f.max), 1)
}

func hasPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
