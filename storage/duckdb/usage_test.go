package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// TestTypedUsageReadsAsParsedSummaries: token sorts, cost sorts and the
// charts' usage sums give the same answers from the typed usage columns
// as from the summaries they were derived from (what rows written before
// the columns, and usages they cannot hold, are read from).
func TestTypedUsageReadsAsParsedSummaries(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	summaries := []struct {
		summary string
		typed   bool
	}{
		{`{"usage":{"m1":{"requests":1,"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}}`, true},
		{`{"usage":{"m1":{"requests":2,"input_tokens":7,"output_tokens":4}}}`, true},
		{`{"usage":{"m2":{"prompt_tokens":2.5,"completion_tokens":1,"cache_read_input_tokens":1}},"weave":{"x":1}}`, true},
		{`{"usage":{"m1":{"total_tokens":0,"prompt_tokens":3,"cache_creation_input_tokens":2,"requests":null}}}`, true},
		{`{"usage":{"m3":{"prompt_tokens":13,"completion_tokens":1e2}}}`, true},
		{`{"us\u0061ge":{"m2":{"prompt_tokens":17}}}`, true},
		{`{"usage":{"m1":{"prompt_tokens":"40","completion_tokens":2}}}`, false}, // a count given as text
		{`{"usage":{"m1":{"prompt_tokens":50},"m2":{"completion_tokens":9,"requests":3}}}`, false},
		{`{"usage":{"m1":{"prompt_tokens":1e400}}}`, false},
		{`{"usage":{"m1":null}}`, false},
		{`{"usage":{"m1":[1]}}`, false},
		{`{"usage":[1,2]}`, false},
		{`{"usage":null}`, false},
		{`{"usage":{}}`, false},
		{`{}`, false},
		{``, false}, // no end
	}
	// Odd calls are written whole, even ones as a start and then an end
	// merged into the stored row: both are typed alike.
	var first, second []storage.CallOp
	typed := 0
	for i, c := range summaries {
		id := fmt.Sprintf("c%02d", i)
		at := base.Add(time.Duration(i) * 20 * time.Second)
		call := storage.Call{ProjectID: "e/p", ID: id, TraceID: "t" + id, OpName: "op", StartedAt: at}
		if c.summary == "" {
			first = append(first, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: call}})
			continue
		}
		end := at.Add(time.Second)
		if i%2 == 1 {
			call.EndedAt, call.Summary = &end, json.RawMessage(c.summary)
			first = append(first, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: call}})
		} else {
			first = append(first, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: call}})
			second = append(second, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{
				ProjectID: "e/p", ID: id, EndedAt: &end, Summary: json.RawMessage(c.summary)}}})
		}
		if c.typed {
			typed++
		}
	}
	for _, ops := range [][]storage.CallOp{first, second} {
		if _, err := s.WriteCallOps(ctx, ops); err != nil {
			t.Fatal(err)
		}
	}
	var got int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM calls WHERE usage_models = 1").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != typed {
		t.Fatalf("%d calls have typed usage, want %d", got, typed)
	}

	prices := []pricing.Price{
		{ID: "p1", Level: pricing.LevelDefault, LevelID: pricing.DefaultLevelID, LLMID: "m1", PromptTokenCost: 0.5,
			CompletionTokenCost: 2, CacheReadInputTokenCost: 0.25, CacheCreationInputTokenCost: 0.75},
		{ID: "p2", Level: pricing.LevelDefault, LevelID: pricing.DefaultLevelID, LLMID: "m2", PromptTokenCost: 3,
			CompletionTokenCost: 0.125, CacheReadInputTokenCost: 1},
	}
	answers := func() map[string]any {
		out := map[string]any{}
		for _, sort := range []storage.SortBy{
			{Field: "summary.weave.total_tokens", Direction: "asc"}, {Field: "summary.weave.total_tokens", Direction: "desc"},
			{Field: "summary.weave.cost", Direction: "asc"}, {Field: "summary.weave.cost", Direction: "desc"},
		} {
			var ids []string
			for c, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "e/p", SortBy: []storage.SortBy{sort},
				Columns: []string{"id"}, Prices: prices}) {
				if err != nil {
					t.Fatalf("sort %v: %v", sort, err)
				}
				ids = append(ids, c.ID)
			}
			out[sort.Field+" "+sort.Direction] = ids
		}
		agg, err := s.AggregateCalls(ctx, storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/p"},
			Start: base, End: base.Add(10 * time.Minute), BucketSeconds: 60})
		if err != nil {
			t.Fatal(err)
		}
		out["usage"] = agg.Usage
		return out
	}
	fromColumns := answers()
	if _, err := s.db.ExecContext(ctx, "UPDATE calls SET usage_models = NULL"); err != nil {
		t.Fatal(err)
	}
	fromSummaries := answers()
	for k, want := range fromSummaries {
		if !reflect.DeepEqual(fromColumns[k], want) {
			t.Errorf("%s: from the typed columns %v, from the summaries %v", k, fromColumns[k], want)
		}
	}
	if u := fromColumns["usage"].([]storage.ModelUsageBucket); len(u) < 5 {
		t.Fatalf("usage sums %v: too few to compare", u)
	}
}

// TestCostModelsFromRollups: once the rollups name a project's models, a
// cost sort or filter prices their calls as constants (sqlgen.CostModels)
// and answers what the lookup answers, over a model's several price spans
// and for a model the rollups do not name.
func TestCostModelsFromRollups(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var ops []storage.CallOp
	for i := range 30 {
		id := fmt.Sprintf("c%02d", i)
		at, end := base.Add(time.Duration(i)*time.Minute), base.Add(time.Duration(i)*time.Minute+time.Second)
		model := []string{"m1", "m1", "m2"}[i%3]
		summary := fmt.Sprintf(`{"usage":{%q:{"prompt_tokens":%d,"completion_tokens":%d,"cache_read_input_tokens":%d}}}`,
			model, 100-3*i, i*i, i%4)
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
			ProjectID: "e/p", ID: id, TraceID: "t" + id, OpName: "op", StartedAt: at, EndedAt: &end, Summary: json.RawMessage(summary)}}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	// m1 costs 1, then 10 from 10 minutes in, then 0.5 from 20; m2 is
	// priced from the project's own row only from 15 minutes in.
	price := func(id, model string, from time.Duration, prompt, completion float64) pricing.Price {
		return pricing.Price{ID: id, Level: pricing.LevelDefault, LevelID: pricing.DefaultLevelID, LLMID: model,
			EffectiveDate: base.Add(from), PromptTokenCost: prompt, CompletionTokenCost: completion, CacheReadInputTokenCost: prompt / 2}
	}
	prices := []pricing.Price{price("a", "m1", -time.Hour, 1, 2), price("b", "m1", 10*time.Minute, 10, 0.5),
		price("c", "m1", 20*time.Minute, 0.5, 30), price("d", "m2", 15*time.Minute, 7, 1)}
	where, err := querylang.Parse(json.RawMessage(`{"$expr": {"$gt": [{"$getField": "summary.weave.cost"}, {"$literal": 500}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	answers := func() map[string][]string {
		out := map[string][]string{}
		for _, q := range []storage.CallsQuery{
			{SortBy: []storage.SortBy{{Field: "summary.weave.cost", Direction: "desc"}}, Limit: 7},
			{SortBy: []storage.SortBy{{Field: "summary.weave.cost", Direction: "asc"}}},
			{Where: where, SortBy: []storage.SortBy{{Field: "id", Direction: "asc"}}},
		} {
			q.ProjectID, q.Columns, q.Prices = "e/p", []string{"id"}, prices
			var ids []string
			for c, err := range s.QueryCalls(ctx, q) {
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID)
			}
			out[fmt.Sprint(q.SortBy, q.Limit, q.Where != nil)] = ids
		}
		return out
	}
	if _, err := s.refreshMinutes(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	probe := storage.CallsQuery{ProjectID: "e/p", Prices: prices}
	if opts := s.costModels(ctx, s.db, probe); len(opts) != 1 {
		t.Fatalf("the rollups name no models: %v", opts)
	}
	constants := answers()
	if _, err := s.db.ExecContext(ctx, "DELETE FROM call_minute_usage WHERE model = 'm2'"); err != nil {
		t.Fatal(err)
	}
	someLooked := answers()
	if _, err := s.db.ExecContext(ctx, "DELETE FROM call_minute_usage"); err != nil {
		t.Fatal(err)
	}
	if opts := s.costModels(ctx, s.db, probe); opts != nil {
		t.Fatalf("no rollups, yet models: %v", opts)
	}
	looked := answers()
	for k, want := range looked {
		if len(want) == 0 {
			t.Fatalf("%s: no calls", k)
		}
		if !reflect.DeepEqual(constants[k], want) || !reflect.DeepEqual(someLooked[k], want) {
			t.Errorf("%s: priced as constants %v, partly %v, by lookup %v", k, constants[k], someLooked[k], want)
		}
	}
}
