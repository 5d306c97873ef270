package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/training"
	"github.com/weftdev/weft/training/queue"
)

// TestSystemCheckAnswers503WhenTheQueueIsDown: a queue that stopped
// fails its check; the answer says which part failed, and how long each
// check took.
func TestSystemCheckAnswers503WhenTheQueueIsDown(t *testing.T) {
	store, err := duckdb.Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	q, err := queue.NewLocal(context.Background(), store, time.Second, time.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = q.Run(ctx) // returns at once: the queue is down
	svc := training.New(training.Deps{Config: training.DefaultConfig(), Store: store, Objects: store, Files: store, Queue: q, Now: time.Now})
	mux := http.NewServeMux()
	New(svc, auth.StoreVerifier{Store: auth.NewFileStore(t.TempDir())}, 1<<20, 1<<20, nil, slog.New(slog.DiscardHandler)).Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/system-check", nil))
	var checks map[string]struct {
		Success  bool
		Duration float64
		Error    *string
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &checks); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusServiceUnavailable || checks["job_queue"].Success || checks["job_queue"].Error == nil ||
		!checks["database"].Success || !checks["api"].Success {
		t.Fatalf("system check = %d %s", rec.Code, rec.Body)
	}
}
