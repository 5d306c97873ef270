package traceapi_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/traceapi"
)

// BenchmarkEvalResultsCompare times the comparison of two evaluations of
// 10,000 rows each on DuckDB: every row of both, grouped, sorted by a
// score, with the summary. The target is under 2 s a comparison.
func BenchmarkEvalResultsCompare(b *testing.B) {
	const rows = 10_000
	store := openDuckDB(b)
	project := "acme/bench"
	data := make([]map[string]any, rows)
	for i := range data {
		data[i] = map[string]any{"question": fmt.Sprintf("question %d", i), "expected": fmt.Sprintf("answer %d", i%7)}
	}
	start := time.Now()
	seed := seedDataset(b, store, project, data)
	results := map[string]map[int]evalRowResult{"A": {}, "B": {}}
	for i := range rows {
		results["A"][i] = evalRowResult{output: fmt.Sprintf("answer %d", i%5), correct: i%5 == i%7, similarity: float64(i%100) / 100}
		results["B"][i] = evalRowResult{output: fmt.Sprintf("answer %d", i%7), correct: true, similarity: float64(i%10) / 10}
	}
	a := seedEvaluation(b, store, seed, "weave:///"+project+"/object/ModelA:0123456789abcdef", results["A"])
	c := seedEvaluation(b, store, seed, "weave:///"+project+"/object/ModelB:0123456789abcdef", results["B"])
	b.Logf("seeded 2 evaluations of %d rows (%d calls) in %v", rows, 2*(3*rows+2), time.Since(start).Round(time.Millisecond))

	mux := http.NewServeMux()
	traceapi.NewEvalResultsAPI(store, store, traceapi.CallExtras{}, 4<<20, slog.New(slog.DiscardHandler)).
		Register(mux, func(h http.Handler) http.Handler { return h })
	body := map[string]any{"evaluation_call_ids": []string{a.root, c.root}, "include_summary": true, "require_intersection": true,
		"sort_by": []any{map[string]any{"field": "scores.similarity.score", "direction": "desc", "evaluation_call_id": a.root}},
		"limit":   100}
	raw := rawJSON(b, body)
	b.ResetTimer()
	var total time.Duration
	for b.Loop() {
		t0 := time.Now()
		req := httptest.NewRequest("POST", "/v2/"+project+"/eval_results/query", bytes.NewReader(raw))
		req = req.WithContext(httpapi.WithPrincipal(req.Context(), principal("acme", auth.RoleMember)))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		total += time.Since(t0)
		if rec.Code != http.StatusOK {
			b.Fatalf("= %d %.300s", rec.Code, rec.Body.Bytes())
		}
	}
	ms := float64(total.Milliseconds()) / float64(b.N)
	b.ReportMetric(ms, "ms/compare")
	b.Logf("comparison of 2 x %d rows: %.0f ms", rows, ms)
}
