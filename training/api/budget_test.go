package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/training"
	"github.com/weftdev/weft/training/queue"
)

// TestWorkerJSONBodiesAreBudgeted: the worker's JSON bodies take their
// share of the in-flight byte budget like every other API body, so when
// it is spent they are answered 429 before being read; checkpoint file
// uploads and downloads stream and are not counted.
func TestWorkerJSONBodiesAreBudgeted(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	store, err := duckdb.Open(context.Background(), t.TempDir(), logger)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	q, err := queue.NewLocal(context.Background(), store, time.Second, time.Now, logger)
	if err != nil {
		t.Fatal(err)
	}
	svc := training.New(training.Deps{Config: training.DefaultConfig(), Store: store, Objects: store, Files: store, Queue: q, Now: time.Now})
	budget := httpapi.NewInflight(1 << 20)
	mux := http.NewServeMux()
	New(svc, auth.StoreVerifier{Store: auth.NewFileStore(t.TempDir())}, 1<<20, 1<<20, budget, logger).Register(mux)
	release, ok := budget.Reserve(1 << 20) // every byte taken by other requests
	if !ok {
		t.Fatal("cannot take the budget")
	}
	defer release()
	const job = "/v1/worker/jobs/0192c6a3-8b2e-7f3a-9c1d-2e4f6a8b0c1d"
	for _, tc := range []struct {
		method, path string
		budgeted     bool
	}{
		{http.MethodPost, job + "/events", true},
		{http.MethodPost, job + "/checkpoints", true},
		{http.MethodPost, job + "/finish", true},
		{http.MethodPost, job + "/heartbeat", true},
		{http.MethodPut, job + "/files/model.bin", false},
		{http.MethodGet, job + "/files/abc", false},
	} {
		rec := httptest.NewRecorder()
		var body *strings.Reader
		if tc.method != http.MethodGet {
			body = strings.NewReader(`{"seq":1,"events":[]}`)
		} else {
			body = strings.NewReader("")
		}
		mux.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, body))
		if got := rec.Code == http.StatusTooManyRequests; got != tc.budgeted {
			t.Errorf("%s %s with the budget spent = %d %s; budgeted %v, want %v", tc.method, tc.path, rec.Code, rec.Body, got, tc.budgeted)
		}
		if tc.budgeted && rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s %s: 429 without Retry-After", tc.method, tc.path)
		}
	}
}
