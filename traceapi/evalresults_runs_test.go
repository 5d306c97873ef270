package traceapi_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/weftdev/weft/traceapi"
)

// TestEvalResultsOfRunsDuckDB and TestEvalResultsOfRunsClickHouse compare
// a run recorded through the v2 evaluation runs API, named by
// evaluation_run_ids.
func TestEvalResultsOfRunsDuckDB(t *testing.T) {
	testEvalResultsOfRuns(t, openDuckDB(t))
}

func TestEvalResultsOfRunsClickHouse(t *testing.T) {
	testEvalResultsOfRuns(t, openClickHouse(t))
}

func testEvalResultsOfRuns(t *testing.T, store evalStore) {
	e := newEvalEnv(t, store)
	e.project = "acme/runs"
	traceapi.NewEvalResultsAPI(store, store, traceapi.CallExtras{}, 4<<20, slog.New(slog.DiscardHandler)).
		Register(e.mux, func(h http.Handler) http.Handler { return h })
	model := e.ref("MyModel")
	run := e.createRun(e.ref("qa-eval"), model)
	var preds []string
	// A prediction's inputs are its row's example, as the reference
	// records them.
	for i, q := range []string{"2+2", "3+3"} {
		pred := e.createPrediction(map[string]any{"model": model, "inputs": map[string]any{"q": q}, "output": "4",
			"evaluation_run_id": run})
		e.createScore(map[string]any{"prediction_id": pred, "scorer": e.ref("exact"), "value": 1 - i, "evaluation_run_id": run})
		e.ok("POST", e.v2("predictions/"+pred+"/finish"), nil)
		preds = append(preds, pred)
	}
	e.ok("POST", e.v2("evaluation_runs/"+run+"/finish"), nil)

	res := e.ok("POST", e.v2("eval_results/query"), map[string]any{"evaluation_run_ids": []string{run},
		"include_summary": true, "include_raw_data_rows": true})
	rows, _ := res["rows"].([]any)
	if res["total_rows"] != 2.0 || len(rows) != 2 {
		t.Fatalf("answer %v; want the run's 2 rows", res)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		row := r.(map[string]any)
		raw, _ := row["raw_data_row"].(map[string]any)
		evs, _ := row["evaluations"].([]any)
		if raw == nil || len(evs) != 1 {
			t.Fatalf("row %v; want its inline example and one evaluation", row)
		}
		ev := evs[0].(map[string]any)
		trial := ev["trials"].([]any)[0].(map[string]any)
		scores, _ := trial["scores"].(map[string]any)
		i := 0
		if raw["q"] == "3+3" {
			i = 1
		}
		if ev["evaluation_call_id"] != run || trial["predict_call_id"] != preds[i] || scores["exact"] != float64(1-i) {
			t.Errorf("row %v of prediction %s; want run %s, its predict call and exact %d", row, preds[i], run, 1-i)
		}
		seen[row["row_digest"].(string)] = true
	}
	if len(seen) != 2 {
		t.Errorf("row digests %v; want one per example", seen)
	}
	summary := res["summary"].(map[string]any)
	evals := summary["evaluations"].([]any)
	stats := evals[0].(map[string]any)["scorer_stats"].([]any)
	st := stats[0].(map[string]any)
	if len(stats) != 1 || st["scorer_key"] != "exact" || st["value_type"] != "continuous" || st["numeric_mean"] != 0.5 {
		t.Errorf("scorer_stats %v; want exact with mean 0.5", stats)
	}
}
