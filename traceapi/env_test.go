package traceapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/traceapi"
)

// storeEnv serves the files, feedback and cost endpoints over a real
// DuckDB store, as the given caller.
type storeEnv struct {
	store  *duckdb.Store
	mux    *http.ServeMux
	caller auth.Principal
}

const (
	testMaxFile = 1 << 20
	testMaxBody = 4 << 20
)

var fbcCaller = auth.Principal{KeyID: "k1", UserID: "user-1", Entity: "acme", Role: auth.RoleMember}

func newStoreEnv(t testing.TB) *storeEnv { return newStoreEnvLimit(t, testMaxFile) }

// newStoreEnvLimit is newStoreEnv with another file size limit.
func newStoreEnvLimit(t testing.TB, maxFile int64) *storeEnv {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	s, err := duckdb.Open(context.Background(), t.TempDir(), logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	e := &storeEnv{store: s, mux: http.NewServeMux(), caller: fbcCaller}
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), e.caller)))
		})
	}
	traceapi.NewFilesAPI(s, maxFile, testMaxBody, logger).Register(e.mux, wrap)
	fb, err := traceapi.NewFeedbackAPI(s, testMaxBody, logger)
	if err != nil {
		t.Fatal(err)
	}
	fb.Register(e.mux, wrap)
	traceapi.NewCostsAPI(s, testMaxBody, logger).Register(e.mux, wrap)
	return e
}

func (e *storeEnv) do(path, contentType string, body io.Reader) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	return rec
}

// postJSON posts body (a string or a value to marshal) and decodes the
// answer into a map when it is JSON.
func (e *storeEnv) postJSON(t testing.TB, path string, body any) (int, map[string]any) {
	t.Helper()
	raw, ok := body.(string)
	if !ok {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	rec := e.do(path, "application/json", bytes.NewReader([]byte(raw)))
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("POST %s answered %d with non-JSON %q", path, rec.Code, rec.Body.String())
	}
	return rec.Code, out
}

// expectStatus posts body and checks the status, returning the answer.
func (e *storeEnv) expectStatus(t testing.TB, path string, body any, want int) map[string]any {
	t.Helper()
	code, out := e.postJSON(t, path, body)
	if code != want {
		t.Fatalf("POST %s %v: status %d (%v), want %d", path, body, code, out, want)
	}
	return out
}
