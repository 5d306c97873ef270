package traceapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/traceapi"
	"github.com/weftdev/weft/wire"
)

// evalResultsStore is what the comparison endpoint and its seeding need
// of a backend.
type evalResultsStore interface {
	storage.CallWriter
	traceapi.CallReader
	storage.ObjectStore
	storage.TableStore
	storage.CostStore
}

// evalResultsEnv serves eval_results/query over one store.
type evalResultsEnv struct {
	evalEnv
	store evalResultsStore
}

func newEvalResultsEnv(t *testing.T, store evalResultsStore) *evalResultsEnv {
	t.Helper()
	mux := http.NewServeMux()
	defaults, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	traceapi.NewEvalResultsAPI(store, store, traceapi.CallExtras{Prices: store, Defaults: defaults}, 4<<20, slog.New(slog.DiscardHandler)).
		Register(mux, func(h http.Handler) http.Handler { return h })
	return &evalResultsEnv{evalEnv: evalEnv{t: t, mux: mux, project: "acme/compare", caller: principal("acme", auth.RoleMember)}, store: store}
}

func openDuckDB(t testing.TB) *duckdb.Store {
	t.Helper()
	s, err := duckdb.Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestEvalResultsDuckDB(t *testing.T) {
	runEvalResultsSuite(t, newEvalResultsEnv(t, openDuckDB(t)))
}

func TestEvalResultsClickHouse(t *testing.T) {
	runEvalResultsSuite(t, newEvalResultsEnv(t, openClickHouse(t)))
}

// seededEval is one evaluation as the Python SDK writes it.
type seededEval struct {
	root     string
	rows     map[int]string // dataset row index -> predict_and_score id
	predicts map[int]string
	scorers  map[int]string
}

// evalSeed is a dataset of rows and the refs that name them.
type evalSeed struct {
	project string
	rows    []map[string]any
	rowRefs []string
}

// seedDataset stores the rows as a Dataset object over a table, as
// weave.Dataset publishes them.
func seedDataset(t testing.TB, store evalResultsStore, project string, rows []map[string]any) evalSeed {
	t.Helper()
	ctx := context.Background()
	raws := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		raws[i] = rawJSON(t, r)
	}
	table, err := store.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: project, Rows: raws}})
	if err != nil {
		t.Fatal(err)
	}
	val := rawJSON(t, map[string]any{"_type": "Dataset", "name": "qa", "rows": "weave:///" + project + "/table/" + table.Digest,
		"_class_name": "Dataset", "_bases": []string{"Object", "BaseModel"}})
	obj, err := store.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{ProjectID: project, ObjectID: "qa", Val: val}})
	if err != nil {
		t.Fatal(err)
	}
	seed := evalSeed{project: project, rows: rows}
	for _, d := range table.RowDigests {
		seed.rowRefs = append(seed.rowRefs, fmt.Sprintf("weave:///%s/object/qa:%s/attr/rows/id/%s", project, obj.Digest, d))
	}
	return seed
}

func rawJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// evalRowResult is what the model and the scorers made of one row.
type evalRowResult struct {
	output     string
	correct    bool
	similarity float64
}

// seedEvaluation writes an evaluation of model over the seed's rows that
// results names (rows it does not name are not evaluated): the root,
// per row a predict_and_score call with the model's predict and the
// scorer's call under it, and the summarize call.
func seedEvaluation(t testing.TB, store evalResultsStore, seed evalSeed, model string, results map[int]evalRowResult) seededEval {
	t.Helper()
	p := seed.project
	op := func(name string) string { return "weave:///" + p + "/op/" + name + ":0123456789abcdef" }
	evalRef := "weave:///" + p + "/object/qa-eval:0123456789abcdef"
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ev := seededEval{root: uuid.NewString(), rows: map[int]string{}, predicts: map[int]string{}, scorers: map[int]string{}}
	trace := uuid.NewString()
	var parts []storage.CallOp
	add := func(id, parent, opName string, inputs, output, summary any, start, end time.Duration) {
		c := wire.CompletedCall{StartedCall: wire.StartedCall{ProjectID: p, ID: id, TraceID: trace, OpName: opName,
			StartedAt: wire.Time{Time: base.Add(start)}, Attributes: json.RawMessage(`{}`), Inputs: rawJSON(t, inputs)},
			EndedAt: wire.Time{Time: base.Add(end)}, Output: rawJSON(t, output), Summary: rawJSON(t, summary)}
		if parent != "" {
			c.ParentID = &parent
		}
		part, err := c.CompletePart("py-user", refs.ExtractRefs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, storage.CallOp{Part: &part})
	}
	modelName := wireName(model)
	for i := range seed.rows {
		r, ok := results[i]
		if !ok {
			continue
		}
		at := time.Duration(i+1) * 100 * time.Millisecond
		pas, predict, scorer := uuid.NewString(), uuid.NewString(), uuid.NewString()
		ev.rows[i], ev.predicts[i], ev.scorers[i] = pas, predict, scorer
		add(predict, pas, op(modelName+".predict"), map[string]any{"self": model, "question": seed.rows[i]["question"]},
			r.output, map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"requests": 1,
				"prompt_tokens": 5, "completion_tokens": 5 + i, "total_tokens": 10 + i}}},
			at+time.Millisecond, at+10*time.Millisecond)
		add(scorer, pas, op("exact_match"), map[string]any{"expected": seed.rows[i]["expected"], "output": r.output},
			r.correct, map[string]any{}, at+11*time.Millisecond, at+12*time.Millisecond)
		add(pas, ev.root, op("Evaluation.predict_and_score"), map[string]any{"self": evalRef, "model": model, "example": seed.rowRefs[i]},
			map[string]any{"output": r.output, "scores": map[string]any{"exact_match": r.correct,
				"similarity": map[string]any{"score": r.similarity, "passed": r.similarity >= 0.5}},
				"model_latency": map[string]any{"mean": 0.009}},
			map[string]any{}, at, at+50*time.Millisecond)
	}
	add(uuid.NewString(), ev.root, op("Evaluation.summarize"), map[string]any{"self": evalRef}, map[string]any{}, map[string]any{},
		900*time.Millisecond, 950*time.Millisecond)
	add(ev.root, "", op("Evaluation.evaluate"), map[string]any{"self": evalRef, "model": model}, map[string]any{}, map[string]any{}, 0, time.Second)
	if _, err := store.WriteCallOps(context.Background(), parts); err != nil {
		t.Fatal(err)
	}
	return ev
}

// wireName is the object name of a ref.
func wireName(ref string) string {
	r, err := refs.Parse(ref)
	if err != nil {
		return ref
	}
	return r.Name
}

// evalResultsFixture is two evaluations of the same three-row dataset: A
// scores every row, B (another model) only the first two.
type evalResultsFixture struct {
	seed evalSeed
	a, b seededEval
}

func seedComparison(t testing.TB, store evalResultsStore, project string) evalResultsFixture {
	rows := []map[string]any{
		{"question": "capital of France?", "expected": "Paris"},
		{"question": "capital of Spain?", "expected": "Madrid"},
		{"question": "capital of Italy?", "expected": "Rome"},
	}
	seed := seedDataset(t, store, project, rows)
	a := seedEvaluation(t, store, seed, "weave:///"+project+"/object/ModelA:0123456789abcdef", map[int]evalRowResult{
		0: {"Paris", true, 0.9}, 1: {"Paris", false, 0.2}, 2: {"Rome", true, 0.7}})
	b := seedEvaluation(t, store, seed, "weave:///"+project+"/object/ModelB:0123456789abcdef", map[int]evalRowResult{
		0: {"Paris", true, 1.0}, 1: {"Madrid", true, 0.95}})
	return evalResultsFixture{seed: seed, a: a, b: b}
}

func runEvalResultsSuite(t *testing.T, e *evalResultsEnv) {
	fx := seedComparison(t, e.store, e.project)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, e *evalResultsEnv, fx evalResultsFixture)
	}{
		{"grouped_rows", testEvalResultsRows},
		{"intersection", testEvalResultsIntersection},
		{"summary", testEvalResultsSummary},
		{"sort", testEvalResultsSort},
		{"filter", testEvalResultsFilter},
		{"raw_rows", testEvalResultsRawRows},
		{"errors", testEvalResultsErrors},
		{"costs", testEvalResultsCosts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := *e
			env.t = t
			tc.run(t, &env, fx)
		})
	}
}

// evalResultsRowAnswer is EvalResultsRow as the tests read it.
type evalResultsRowAnswer struct {
	RowDigest   string          `json:"row_digest"`
	RawDataRow  json.RawMessage `json:"raw_data_row"`
	Evaluations []struct {
		EvaluationCallID string `json:"evaluation_call_id"`
		Trials           []struct {
			PredictAndScoreCallID string                     `json:"predict_and_score_call_id"`
			PredictCallID         *string                    `json:"predict_call_id"`
			ModelOutput           any                        `json:"model_output"`
			Scores                map[string]json.RawMessage `json:"scores"`
			ModelLatencySeconds   *float64                   `json:"model_latency_seconds"`
			TotalTokens           *int64                     `json:"total_tokens"`
			TotalCost             *float64                   `json:"total_cost"`
			ScorerCallIDs         map[string]string          `json:"scorer_call_ids"`
		} `json:"trials"`
	} `json:"evaluations"`
}

// evalResultsAnswer is EvalResultsQueryRes as the tests read it.
type evalResultsAnswer struct {
	Rows      []evalResultsRowAnswer `json:"rows"`
	TotalRows int                    `json:"total_rows"`
	Summary   *struct {
		RowCount    int `json:"row_count"`
		Evaluations []struct {
			EvaluationCallID   string   `json:"evaluation_call_id"`
			TrialCount         int      `json:"trial_count"`
			PredictTotalTokens *int64   `json:"predict_total_tokens"`
			PredictTotalCost   *float64 `json:"predict_total_cost"`
			ModelRef           string   `json:"model_ref"`
			EvaluationRef      string   `json:"evaluation_ref"`
			ScorerStats        []struct {
				ScorerKey      string   `json:"scorer_key"`
				Path           *string  `json:"path"`
				ValueType      string   `json:"value_type"`
				TrialCount     int      `json:"trial_count"`
				NumericMean    *float64 `json:"numeric_mean"`
				PassTrueCount  int      `json:"pass_true_count"`
				PassKnownCount int      `json:"pass_known_count"`
				PassRate       *float64 `json:"pass_rate"`
			} `json:"scorer_stats"`
		} `json:"evaluations"`
	} `json:"summary"`
	Warnings []string `json:"warnings"`
}

func (e *evalResultsEnv) compare(body map[string]any) evalResultsAnswer {
	e.t.Helper()
	status, out := e.send("POST", e.v2("eval_results/query"), body)
	if status != http.StatusOK {
		e.t.Fatalf("eval_results/query = %d: %s", status, out)
	}
	var res evalResultsAnswer
	if err := json.Unmarshal(out, &res); err != nil {
		e.t.Fatalf("%v in %s", err, out)
	}
	return res
}

// digestOf is the row digest a dataset row's ref names.
func (fx evalResultsFixture) digestOf(i int) string {
	ref := fx.seed.rowRefs[i]
	return ref[strings.LastIndexByte(ref, '/')+1:]
}

func (fx evalResultsFixture) rowOrder(res evalResultsAnswer) []int {
	var out []int
	for _, r := range res.Rows {
		for i := range fx.seed.rows {
			if fx.digestOf(i) == r.RowDigest {
				out = append(out, i)
			}
		}
	}
	return out
}

func testEvalResultsRows(t *testing.T, e *evalResultsEnv, fx evalResultsFixture) {
	res := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root}, "evaluation_run_ids": []string{fx.b.root, fx.a.root}})
	if res.TotalRows != 3 || len(res.Rows) != 3 {
		t.Fatalf("total_rows %d, %d rows; want the 3 dataset rows", res.TotalRows, len(res.Rows))
	}
	if !slices.IsSortedFunc(res.Rows, func(a, b evalResultsRowAnswer) int {
		return strings.Compare(a.RowDigest, b.RowDigest)
	}) {
		t.Errorf("rows not in row digest order: %v", fx.rowOrder(res))
	}
	for _, row := range res.Rows {
		idx := slices.IndexFunc(fx.seed.rowRefs, func(ref string) bool { return strings.HasSuffix(ref, "/"+row.RowDigest) })
		if idx < 0 {
			t.Fatalf("row digest %s names no dataset row", row.RowDigest)
		}
		if row.RawDataRow != nil && string(row.RawDataRow) != "null" {
			t.Errorf("row %d raw_data_row %s without include_raw_data_rows", idx, row.RawDataRow)
		}
		wantEvals := []string{fx.a.root, fx.b.root}
		if idx == 2 {
			wantEvals = wantEvals[:1]
		}
		var got []string
		for _, ev := range row.Evaluations {
			got = append(got, ev.EvaluationCallID)
		}
		if !slices.Equal(got, wantEvals) {
			t.Fatalf("row %d evaluations %v, want %v", idx, got, wantEvals)
		}
		tr := row.Evaluations[0].Trials
		if len(tr) != 1 || tr[0].PredictAndScoreCallID != fx.a.rows[idx] {
			t.Fatalf("row %d trials of A: %+v; want its predict_and_score %s", idx, tr, fx.a.rows[idx])
		}
		trial := tr[0]
		if trial.PredictCallID == nil || *trial.PredictCallID != fx.a.predicts[idx] {
			t.Errorf("row %d predict_call_id %v, want %s", idx, trial.PredictCallID, fx.a.predicts[idx])
		}
		if trial.ScorerCallIDs["exact_match"] != fx.a.scorers[idx] {
			t.Errorf("row %d scorer_call_ids %v, want exact_match %s", idx, trial.ScorerCallIDs, fx.a.scorers[idx])
		}
		if trial.ModelLatencySeconds == nil || math.Abs(*trial.ModelLatencySeconds-0.009) > 1e-6 {
			t.Errorf("row %d model_latency_seconds %v, want the predict call's 0.009", idx, trial.ModelLatencySeconds)
		}
		if trial.TotalTokens == nil || *trial.TotalTokens != int64(10+idx) {
			t.Errorf("row %d total_tokens %v, want %d", idx, trial.TotalTokens, 10+idx)
		}
		wantCorrect := idx != 1
		if string(trial.Scores["exact_match"]) != fmt.Sprint(wantCorrect) {
			t.Errorf("row %d exact_match %s, want %v", idx, trial.Scores["exact_match"], wantCorrect)
		}
	}
	// A page past the first row.
	paged := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root, fx.b.root}, "limit": 1, "offset": 1})
	if paged.TotalRows != 3 || len(paged.Rows) != 1 || paged.Rows[0].RowDigest != res.Rows[1].RowDigest {
		t.Errorf("limit 1 offset 1: total %d rows %v; want the second of 3", paged.TotalRows, fx.rowOrder(paged))
	}
}

func testEvalResultsIntersection(t *testing.T, e *evalResultsEnv, fx evalResultsFixture) {
	res := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root, fx.b.root}, "require_intersection": true, "include_summary": true})
	got := fx.rowOrder(res)
	slices.Sort(got)
	if res.TotalRows != 2 || !slices.Equal(got, []int{0, 1}) {
		t.Errorf("require_intersection: total %d rows %v; want rows 0 and 1, which both evaluations scored", res.TotalRows, got)
	}
	if res.Summary == nil || res.Summary.RowCount != 2 {
		t.Errorf("summary follows require_intersection: %+v; want row_count 2", res.Summary)
	}
	loose := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root, fx.b.root}, "require_intersection": true,
		"include_summary": true, "summary_require_intersection": false})
	if loose.TotalRows != 2 || loose.Summary.RowCount != 3 {
		t.Errorf("summary_require_intersection false: total %d, summary rows %d; want 2 and 3", loose.TotalRows, loose.Summary.RowCount)
	}
}

func testEvalResultsSummary(t *testing.T, e *evalResultsEnv, fx evalResultsFixture) {
	res := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root, fx.b.root}, "include_summary": true, "include_rows": false})
	if len(res.Rows) != 0 || res.TotalRows != 0 {
		t.Errorf("include_rows false answered %d rows, total %d", len(res.Rows), res.TotalRows)
	}
	if res.Summary == nil || res.Summary.RowCount != 3 || len(res.Summary.Evaluations) != 2 {
		t.Fatalf("summary %+v; want 3 rows over 2 evaluations", res.Summary)
	}
	for _, tc := range []struct {
		ev                  int
		id, model           string
		trials              int
		exactRate, passRate float64
		meanScore           float64
		tokens              int64
	}{
		{0, fx.a.root, "ModelA", 3, 2.0 / 3, 2.0 / 3, (0.9 + 0.2 + 0.7) / 3, 10 + 11 + 12},
		{1, fx.b.root, "ModelB", 2, 1, 1, (1.0 + 0.95) / 2, 10 + 11},
	} {
		s := res.Summary.Evaluations[tc.ev]
		if s.EvaluationCallID != tc.id || s.TrialCount != tc.trials || !strings.Contains(s.ModelRef, tc.model) ||
			!strings.Contains(s.EvaluationRef, "qa-eval") {
			t.Errorf("evaluation %d: %+v; want %s with %d trials of %s", tc.ev, s, tc.id, tc.trials, tc.model)
		}
		if s.PredictTotalTokens == nil || *s.PredictTotalTokens != tc.tokens {
			t.Errorf("evaluation %d predict_total_tokens %v, want %d", tc.ev, s.PredictTotalTokens, tc.tokens)
		}
		found := 0
		for _, st := range s.ScorerStats {
			switch {
			case st.ScorerKey == "exact_match" && st.Path == nil:
				found++
				if st.ValueType != "binary" || st.PassKnownCount != tc.trials || st.PassRate == nil || math.Abs(*st.PassRate-tc.exactRate) > 1e-9 {
					t.Errorf("evaluation %d exact_match %+v, want binary pass rate %v", tc.ev, st, tc.exactRate)
				}
			case st.ScorerKey == "similarity" && st.Path != nil && *st.Path == "passed":
				found++
				if st.PassRate == nil || math.Abs(*st.PassRate-tc.passRate) > 1e-9 {
					t.Errorf("evaluation %d similarity.passed %+v, want pass rate %v", tc.ev, st, tc.passRate)
				}
			case st.ScorerKey == "similarity" && st.Path != nil && *st.Path == "score":
				found++
				if st.ValueType != "continuous" || st.NumericMean == nil || math.Abs(*st.NumericMean-tc.meanScore) > 1e-9 {
					t.Errorf("evaluation %d similarity.score %+v, want mean %v", tc.ev, st, tc.meanScore)
				}
			}
		}
		if found != 3 {
			t.Errorf("evaluation %d scorer_stats %+v; want exact_match, similarity.passed and similarity.score", tc.ev, s.ScorerStats)
		}
	}
}

func testEvalResultsSort(t *testing.T, e *evalResultsEnv, fx evalResultsFixture) {
	for _, tc := range []struct {
		name string
		sort map[string]any
		want []int
	}{
		{"score_desc_in_a", map[string]any{"field": "scores.similarity.score", "direction": "desc", "evaluation_call_id": fx.a.root}, []int{0, 2, 1}},
		{"score_asc_in_a", map[string]any{"field": "scores.similarity.score", "direction": "asc", "evaluation_call_id": fx.a.root}, []int{1, 2, 0}},
		// B did not score row 2: it sorts last either way.
		{"score_asc_in_b", map[string]any{"field": "scores.similarity.score", "direction": "asc", "evaluation_call_id": fx.b.root}, []int{1, 0, 2}},
		{"difference_desc", map[string]any{"field": "scores.similarity.score", "direction": "desc", "mode": "difference"}, []int{1, 0, 2}},
		{"input_asc", map[string]any{"field": "output", "direction": "asc"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"evaluation_call_ids": []string{fx.a.root, fx.b.root}, "sort_by": []any{tc.sort}}
			if tc.want == nil {
				status, out := e.send("POST", e.v2("eval_results/query"), body)
				if status != http.StatusBadRequest || !strings.Contains(string(out), "sort_by[0].field") {
					t.Errorf("sort by %v = %d %s; want 400 naming sort_by[0].field", tc.sort, status, out)
				}
				return
			}
			if got := fx.rowOrder(e.compare(body)); !slices.Equal(got, tc.want) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
		})
	}
}

func testEvalResultsFilter(t *testing.T, e *evalResultsEnv, fx evalResultsFixture) {
	correct := map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": "scores.exact_match"}, map[string]any{"$literal": true}}}}
	for _, tc := range []struct {
		name    string
		filters []any
		logic   string
		want    []int
	}{
		{"correct_in_a", []any{map[string]any{"evaluation_call_id": fx.a.root, "query": correct}}, "", []int{0, 2}},
		{"correct_in_b", []any{map[string]any{"evaluation_call_id": fx.b.root, "query": correct}}, "", []int{0, 1}},
		{"correct_in_any", []any{map[string]any{"query": correct}}, "or", []int{0, 1, 2}},
		{"correct_in_all", []any{map[string]any{"query": correct}}, "and", []int{0, 2}},
		{"and_of_filters", []any{map[string]any{"evaluation_call_id": fx.a.root, "query": correct},
			map[string]any{"query": map[string]any{"$expr": map[string]any{"$contains": map[string]any{
				"input": map[string]any{"$getField": "outputs"}, "substr": map[string]any{"$literal": "Rom"}}}}}}, "", []int{2}},
		{"score_above", []any{map[string]any{"evaluation_call_id": fx.a.root, "query": map[string]any{"$expr": map[string]any{
			"$gt": []any{map[string]any{"$getField": "scores.similarity.score"}, map[string]any{"$literal": 0.5}}}}}}, "", []int{0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"evaluation_call_ids": []string{fx.a.root, fx.b.root}, "filters": tc.filters}
			if tc.logic != "" {
				body["filter_logic_operator"] = tc.logic
			}
			res := e.compare(body)
			got := fx.rowOrder(res)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) || res.TotalRows != len(tc.want) {
				t.Errorf("rows %v (total %d), want %v", got, res.TotalRows, tc.want)
			}
		})
	}
}

func testEvalResultsRawRows(t *testing.T, e *evalResultsEnv, fx evalResultsFixture) {
	refsOnly := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root}, "include_raw_data_rows": true})
	resolved := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root}, "include_raw_data_rows": true, "resolve_row_refs": true})
	for k, row := range refsOnly.Rows {
		i := fx.rowOrder(refsOnly)[k]
		var ref string
		if json.Unmarshal(row.RawDataRow, &ref) != nil || ref != fx.seed.rowRefs[i] {
			t.Errorf("row %d raw_data_row %s; want its ref %s", i, row.RawDataRow, fx.seed.rowRefs[i])
		}
		var got map[string]any
		if err := json.Unmarshal(resolved.Rows[k].RawDataRow, &got); err != nil || got["question"] != fx.seed.rows[i]["question"] {
			t.Errorf("row %d resolved raw_data_row %s; want %v", i, resolved.Rows[k].RawDataRow, fx.seed.rows[i])
		}
	}
	if len(resolved.Warnings) != 0 {
		t.Errorf("warnings %v", resolved.Warnings)
	}
}

func testEvalResultsErrors(t *testing.T, e *evalResultsEnv, fx evalResultsFixture) {
	many := make([]string, traceapi.MaxEvalResultsEvaluations+1)
	for i := range many {
		many[i] = uuid.NewString()
	}
	for _, tc := range []struct {
		name   string
		path   string
		body   any
		status int
		field  string
	}{
		{"no_evaluations", "", map[string]any{}, 422, "evaluation_call_ids"},
		{"too_many", "", map[string]any{"evaluation_call_ids": many}, 400, "evaluation_call_ids"},
		{"bad_id", "", map[string]any{"evaluation_run_ids": []string{"not an id!"}}, 400, "evaluation_run_ids[0]"},
		{"unknown_key", "", map[string]any{"evaluation_call_ids": []string{fx.a.root}, "project_id": "x"}, 422, "project_id"},
		{"bad_limit", "", map[string]any{"evaluation_call_ids": []string{fx.a.root}, "limit": -1}, 400, "limit"},
		{"bad_mode", "", map[string]any{"evaluation_call_ids": []string{fx.a.root},
			"sort_by": []any{map[string]any{"field": "output.x", "mode": "difference"}}}, 400, "sort_by[0].mode"},
		{"bad_filter_field", "", map[string]any{"evaluation_call_ids": []string{fx.a.root},
			"filters": []any{map[string]any{"query": map[string]any{"$expr": map[string]any{"$eq": []any{
				map[string]any{"$getField": "op_name"}, map[string]any{"$literal": "x"}}}}}}}, 400, "filters[0].query"},
		{"bad_logic", "", map[string]any{"evaluation_call_ids": []string{fx.a.root}, "filter_logic_operator": "xor"}, 400, "filter_logic_operator"},
		{"unknown_evaluation", "", map[string]any{"evaluation_call_ids": []string{fx.a.root, uuid.NewString()}}, 404, ""},
		// Another project's evaluation is unknown here, and that project
		// is not the caller's to read.
		{"other_project", "/v2/acme/elsewhere/eval_results/query", map[string]any{"evaluation_call_ids": []string{fx.a.root}}, 404, ""},
		{"foreign_entity", "/v2/other/compare/eval_results/query", map[string]any{"evaluation_call_ids": []string{fx.a.root}}, 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = e.v2("eval_results/query")
			}
			status, out := e.send("POST", path, tc.body)
			if status != tc.status || !strings.Contains(string(out), tc.field) {
				t.Errorf("= %d %s; want %d naming %q", status, out, tc.status, tc.field)
			}
		})
	}
}

// testEvalResultsCosts: with include_costs each trial costs its predict
// call's usage at the model's price, as include_costs prices the call,
// and the summary adds them up; without it costs stay null.
func testEvalResultsCosts(t *testing.T, e *evalResultsEnv, fx evalResultsFixture) {
	defaults, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	price, ok := pricing.Best("gpt-4o", time.Now(), defaults.All())
	if !ok {
		t.Fatal("the default table has no gpt-4o price")
	}
	res := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root}, "include_costs": true, "include_summary": true})
	var sum float64
	for _, row := range res.Rows {
		trial := row.Evaluations[0].Trials[0]
		var i int
		for k, id := range fx.a.rows {
			if id == trial.PredictAndScoreCallID {
				i = k
			}
		}
		want := price.Charge(pricing.Tokens{Requests: 1, Prompt: 5, Completion: int64(5 + i), Total: int64(10 + i)}).Total()
		if trial.TotalCost == nil || math.Abs(*trial.TotalCost-want) > 1e-12 {
			t.Errorf("row %d total_cost %v, want %v", i, trial.TotalCost, want)
		}
		sum += want
	}
	if s := res.Summary.Evaluations[0]; s.PredictTotalCost == nil || math.Abs(*s.PredictTotalCost-sum) > 1e-12 {
		t.Errorf("predict_total_cost %v, want %v", s.PredictTotalCost, sum)
	}
	plain := e.compare(map[string]any{"evaluation_call_ids": []string{fx.a.root}, "include_summary": true})
	if c := plain.Rows[0].Evaluations[0].Trials[0].TotalCost; c != nil || plain.Summary.Evaluations[0].PredictTotalCost != nil {
		t.Errorf("costs without include_costs: %v", c)
	}
}
