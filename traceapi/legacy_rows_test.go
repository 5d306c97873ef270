package traceapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/traceapi"
)

// legacyDoc holds a lone surrogate escape, as versions that did not clean
// them on the way in stored it. DuckDB's JSON functions refuse the whole
// document.
const legacyDoc = `{"q":"\ud800","n":1}`

// Rows stored before writes were cleaned must not make queries on their
// project fail: every filter and sort on their JSON fields answers 200.
func TestStoredLoneSurrogatesStillQuery(t *testing.T) {
	s, mux := legacyStore(t)
	tests := []struct{ name, path, body string }{
		{"filter inputs", "/calls/stream_query", `{"project_id":"acme/p","query":{"$expr":{"$eq":[{"$getField":"inputs.q"},{"$literal":"x"}]}}}`},
		{"sort inputs", "/calls/stream_query", `{"project_id":"acme/p","sort_by":[{"field":"inputs.q","direction":"desc"}]}`},
		{"sort output", "/calls/stream_query", `{"project_id":"acme/p","sort_by":[{"field":"output.q","direction":"asc"}]}`},
		{"filter attributes", "/calls/stream_query", `{"project_id":"acme/p","query":{"$expr":{"$contains":{"input":{"$getField":"attributes.q"},"substr":{"$literal":"a"}}}}}`},
		{"filter summary", "/calls/stream_query", `{"project_id":"acme/p","query":{"$expr":{"$gt":[{"$convert":{"input":{"$getField":"summary.n"},"to":"double"}},{"$literal":0}]}}}`},
		{"feedback field", "/calls/stream_query", `{"project_id":"acme/p","sort_by":[{"field":"feedback.[custom].payload.q","direction":"asc"}]}`},
		{"stats", "/calls/query_stats", `{"project_id":"acme/p","query":{"$expr":{"$eq":[{"$getField":"inputs.q"},{"$literal":"x"}]}}}`},
		{"feedback payload", "/feedback/query", `{"project_id":"acme/p","query":{"$expr":{"$eq":[{"$getField":"payload.q"},{"$literal":"x"}]}},"sort_by":[{"field":"payload.n","direction":"asc"}]}`},
		{"table rows", "/table/query", `{"project_id":"acme/p","digest":"` + legacyTable(t, s) + `","sort_by":[{"field":"q","direction":"asc"},{"field":"n","direction":"desc"}]}`},
		{"threads", "/threads/stream_query", `{"project_id":"acme/p"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body)))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
			}
		})
	}
}

// legacyStore writes a call and a feedback row holding legacyDoc straight
// into a DuckDB store and serves the query endpoints over it.
func legacyStore(t *testing.T) (*duckdb.Store, *http.ServeMux) {
	t.Helper()
	ctx, logger := context.Background(), slog.New(slog.DiscardHandler)
	s, err := duckdb.Open(ctx, t.TempDir(), logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end := at.Add(time.Second)
	doc := json.RawMessage(legacyDoc)
	call := storage.Call{ProjectID: "acme/p", ID: "c1", TraceID: "t1", OpName: "op", StartedAt: at, EndedAt: &end,
		ThreadID: "th", Attributes: doc, Inputs: doc, Output: doc, Summary: doc}
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: &storage.CallPart{Kind: storage.PartComplete, Call: call}}}); err != nil {
		t.Fatal(err)
	}
	fb := storage.Feedback{ID: "f1", ProjectID: "acme/p", WeaveRef: "weave:///acme/p/call/c1", WBUserID: "u",
		CreatedAt: at, FeedbackType: "custom", Payload: doc}
	if err := s.CreateFeedback(ctx, []storage.Feedback{fb}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), fbcCaller)))
		})
	}
	prices, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	extras := traceapi.CallExtras{Feedback: s, Prices: s, Defaults: prices, Refs: s}
	traceapi.New(s, extras, testMaxBody, logger).Register(mux, wrap)
	traceapi.NewThreadsAPI(s, testMaxBody, logger).Register(mux, wrap)
	traceapi.NewTablesAPI(s, testMaxBody, logger).Register(mux, wrap)
	fapi, err := traceapi.NewFeedbackAPI(s, testMaxBody, logger)
	if err != nil {
		t.Fatal(err)
	}
	fapi.Register(mux, wrap)
	return s, mux
}

// legacyTable stores a table whose row holds legacyDoc.
func legacyTable(t *testing.T, s *duckdb.Store) string {
	t.Helper()
	res, err := s.CreateTable(context.Background(), storage.TableCreateReq{Table: storage.TableSchemaForInsert{
		ProjectID: "acme/p", Rows: []json.RawMessage{json.RawMessage(legacyDoc)}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Digest
}
