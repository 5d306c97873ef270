package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
)

// runCosts runs every price case against stores made by newStore.
func runCosts(t *testing.T, newStore func(t *testing.T) storage.CostStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.CostStore)
	}{
		{"CreateAndQuery", testCostCreateQuery},
		{"QuerySortAndFields", testCostQuerySort},
		{"Purge", testCostPurge},
		{"ProjectPricesForModels", testCostProjectPrices},
		{"RefusesNonProjectRows", testCostRefusesDefaults},
		{"ProjectIsolation", testCostIsolation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func price(project, id, llm string, effective time.Time, prompt float64) pricing.Price {
	return pricing.Price{ID: id, Level: pricing.LevelProject, LevelID: project, ProviderID: "default", LLMID: llm,
		EffectiveDate: effective, PromptTokenCost: prompt, CompletionTokenCost: 2 * prompt,
		PromptTokenCostUnit: pricing.UnitUSD, CompletionTokenCostUnit: pricing.UnitUSD, CreatedBy: "u1", CreatedAt: base}
}

func seedPrices(t *testing.T, s storage.CostStore) {
	t.Helper()
	err := s.CreatePrices(context.Background(), []pricing.Price{
		price("e/p", "p1", "gpt-x", base, 0.001),
		price("e/p", "p2", "gpt-x", base.Add(24*time.Hour), 0.002),
		price("e/p", "p3", "claude-y", base, 0.003),
	})
	if err != nil {
		t.Fatalf("CreatePrices: %v", err)
	}
}

func queryPrices(t *testing.T, s storage.CostStore, q storage.CostQuery) []map[string]any {
	t.Helper()
	res, err := s.QueryPrices(context.Background(), q)
	if err != nil {
		t.Fatalf("QueryPrices(%+v): %v", q, err)
	}
	out := make([]map[string]any, len(res.Results))
	for i, raw := range res.Results {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func testCostCreateQuery(t *testing.T, s storage.CostStore) {
	seedPrices(t, s)
	rows := queryPrices(t, s, storage.CostQuery{ProjectID: "e/p",
		Where: json.RawMessage(`{"$expr":{"$eq":[{"$getField":"id"},{"$literal":"p1"}]}}`)})
	want := map[string]any{"id": "p1", "llm_id": "gpt-x", "prompt_token_cost": 0.001, "completion_token_cost": 0.002,
		"cache_read_input_token_cost": 0.0, "cache_creation_input_token_cost": 0.0,
		"prompt_token_cost_unit": "USD", "completion_token_cost_unit": "USD",
		"effective_date": "2025-03-04T05:06:07Z", "provider_id": "default"}
	if len(rows) != 1 || !reflect.DeepEqual(rows[0], want) {
		t.Fatalf("rows %v, want [%v]", rows, want)
	}
}

func testCostQuerySort(t *testing.T, s storage.CostStore) {
	seedPrices(t, s)
	limit := int64(2)
	rows := queryPrices(t, s, storage.CostQuery{ProjectID: "e/p", Fields: []string{"id", "llm_id"},
		SortBy: []storage.SortBy{{Field: "effective_date", Direction: "desc"}, {Field: "id", Direction: "asc"}}, Limit: &limit})
	want := []map[string]any{{"id": "p2", "llm_id": "gpt-x"}, {"id": "p1", "llm_id": "gpt-x"}}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("sorted, projected, limited: %v, want %v", rows, want)
	}
	rows = queryPrices(t, s, storage.CostQuery{ProjectID: "e/p", Fields: []string{"id"},
		Where:  json.RawMessage(`{"$expr":{"$gt":[{"$getField":"prompt_token_cost"},{"$literal":0.0015}]}}`),
		SortBy: []storage.SortBy{{Field: "id", Direction: "asc"}}})
	if got := column(rows, "id"); !reflect.DeepEqual(got, []any{"p2", "p3"}) {
		t.Fatalf("prompt_token_cost > 0.0015: %v", got)
	}
	if _, err := s.QueryPrices(context.Background(), storage.CostQuery{ProjectID: "e/p", Fields: []string{"secret"}}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("unknown field: err %v, want ErrInvalidArgument", err)
	}
}

func testCostPurge(t *testing.T, s storage.CostStore) {
	seedPrices(t, s)
	if err := s.PurgePrices(context.Background(), "e/p", []string{"p1", "p3"}); err != nil {
		t.Fatal(err)
	}
	if got := column(queryPrices(t, s, storage.CostQuery{ProjectID: "e/p", Fields: []string{"id"}}), "id"); !reflect.DeepEqual(got, []any{"p2"}) {
		t.Fatalf("after purging p1, p3: %v", got)
	}
}

func testCostProjectPrices(t *testing.T, s storage.CostStore) {
	seedPrices(t, s)
	got, err := s.ProjectPrices(context.Background(), "e/p", []string{"gpt-x", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range got {
		ids = append(ids, p.ID)
		if p.Level != pricing.LevelProject || p.LevelID != "e/p" || p.LLMID != "gpt-x" || !p.CreatedAt.Equal(base) {
			t.Errorf("price row read back as %+v", p)
		}
	}
	slices.Sort(ids)
	if !reflect.DeepEqual(ids, []string{"p1", "p2"}) {
		t.Fatalf("prices of gpt-x: %v, want [p1 p2]", ids)
	}
	// The stored rows price a call like the caller expects.
	best, ok := pricing.Best("gpt-x", base.Add(time.Hour), got)
	if !ok || best.ID != "p1" {
		t.Fatalf("best price an hour after base: %+v", best)
	}
}

func testCostRefusesDefaults(t *testing.T, s storage.CostStore) {
	p := price("e/p", "d1", "gpt-x", base, 1)
	p.Level, p.LevelID = pricing.LevelDefault, pricing.DefaultLevelID
	if err := s.CreatePrices(context.Background(), []pricing.Price{p}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("storing a default-level row: err %v, want ErrInvalidArgument", err)
	}
}

func testCostIsolation(t *testing.T, s storage.CostStore) {
	seedPrices(t, s)
	ctx := context.Background()
	if rows := queryPrices(t, s, storage.CostQuery{ProjectID: "b/p"}); len(rows) != 0 {
		t.Fatalf("project B lists A's prices: %v", rows)
	}
	rows := queryPrices(t, s, storage.CostQuery{ProjectID: "b/p",
		Where: json.RawMessage(`{"$expr":{"$eq":[{"$getField":"pricing_level_id"},{"$literal":"e/p"}]}}`)})
	if len(rows) != 0 {
		t.Fatalf("project B reads A's prices through a query: %v", rows)
	}
	if err := s.PurgePrices(ctx, "b/p", []string{"p1", "p2", "p3"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ProjectPrices(ctx, "b/p", []string{"gpt-x", "claude-y"}); err != nil || len(got) != 0 {
		t.Fatalf("project B priced with A's rows: %v, %v", got, err)
	}
	if got, err := s.AllProjectPrices(ctx, "b/p"); err != nil || len(got) != 0 {
		t.Fatalf("project B lists A's rows for its cost sort: %v, %v", got, err)
	}
	if got, err := s.AllProjectPrices(ctx, "e/p"); err != nil || len(got) != 3 {
		t.Fatalf("AllProjectPrices of e/p: %d rows, %v; want 3", len(got), err)
	}
	if rows := queryPrices(t, s, storage.CostQuery{ProjectID: "e/p"}); len(rows) != 3 {
		t.Fatalf("B's purge removed A's prices: %d left", len(rows))
	}
}
