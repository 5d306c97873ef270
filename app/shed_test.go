package app

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// untouchable is a request body that fails the test if read.
type untouchable struct{ t *testing.T }

func (u untouchable) Read([]byte) (int, error) {
	u.t.Error("the body of a shed request was read")
	return 0, io.EOF
}

func TestShedRefusesBeforeReadingTheBody(t *testing.T) {
	saturated := true
	reached := false
	h := shed(func() bool { return saturated }, slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/otel/v1/traces", untouchable{t}))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || reached {
		t.Fatalf("saturated: %d, Retry-After %q, handler reached %v; want 429 with Retry-After, handler not reached",
			rec.Code, rec.Header().Get("Retry-After"), reached)
	}
	saturated = false
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/otel/v1/traces", http.NoBody))
	if rec.Code != http.StatusOK || !reached {
		t.Fatalf("not saturated: %d, handler reached %v", rec.Code, reached)
	}
}
