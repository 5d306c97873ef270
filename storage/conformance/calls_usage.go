package conformance

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
)

// usageStore is what the token and cost sort cases need from a backend.
type usageStore interface {
	callStore
	storage.CostStore
}

// runUsageSort runs the summary.weave.total_tokens and summary.weave.cost
// sort cases against stores made by newStore.
func runUsageSort(t *testing.T, newStore func(t *testing.T) usageStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s usageStore)
	}{
		{"ByTokens", testSortByTokens},
		{"ByCostAtDefaultPrices", testSortByCostDefaults},
		{"ProjectPriceChangesCostOrder", testSortByCostOverride},
		{"PagesByOffset", testSortByCostPages},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// seedUsage writes calls whose token and cost orders differ, at default
// prices (gpt-4o 2.5e-6 a prompt token, gpt-4o-mini 1.5e-7):
//
//	mini    10,000 gpt-4o-mini tokens        cost 0.0015, from base+1h
//	early   the same, before the override    cost 0.0015
//	big      1,000 gpt-4o tokens             cost 0.0025
//	free 1,000,000 tokens of a model without a price: cost 0
//	mixed      100 gpt-4o + 50 unpriced      cost 0.00025
//	none    no usage: NULL, last both ways
//
// and in another project a call that would lead every order.
func seedUsage(t *testing.T, s usageStore) {
	t.Helper()
	c := func(project, id string, at time.Duration, summary string) []storage.CallOp {
		e := end(project, id, base.Add(at+time.Second), `{}`)
		e.Part.Call.Summary = json.RawMessage(summary)
		return []storage.CallOp{start(project, id, "t-"+id, "", "weave:///"+project+"/op/chat:v1", base.Add(at)), e}
	}
	var ops []storage.CallOp
	for _, o := range [][]storage.CallOp{
		c("e/p", "mini", time.Hour, `{"usage": {"gpt-4o-mini": {"prompt_tokens": 10000}}}`),
		c("e/p", "early", -time.Hour, `{"usage": {"gpt-4o-mini": {"input_tokens": 10000}}}`),
		c("e/p", "big", 2*time.Hour, `{"usage": {"gpt-4o": {"prompt_tokens": 1000, "total_tokens": 1000}}}`),
		c("e/p", "free", 3*time.Hour, `{"usage": {"in-house-llm": {"prompt_tokens": 600000, "completion_tokens": 400000}}}`),
		c("e/p", "mixed", 4*time.Hour, `{"usage": {"gpt-4o": {"prompt_tokens": 100}, "in-house-llm": {"output_tokens": 50}}}`),
		c("e/p", "none", 5*time.Hour, `{}`),
		c("e/q", "other", time.Hour, `{"usage": {"gpt-4o": {"prompt_tokens": 1e9}}}`),
	} {
		ops = append(ops, o...)
	}
	write(t, s, ops...)
}

// prices reads the candidate prices of a project as the query API does:
// its own rows and the default table.
func prices(t *testing.T, s usageStore, project string) []pricing.Price {
	t.Helper()
	rows, err := s.AllProjectPrices(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	def, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	return append(rows, def.All()...)
}

func sortedBy(t *testing.T, s usageStore, field, dir string, limit, offset int64) []string {
	t.Helper()
	return ids(query(t, s, storage.CallsQuery{ProjectID: "e/p", Prices: prices(t, s, "e/p"), Limit: limit, Offset: offset,
		SortBy: []storage.SortBy{{Field: field, Direction: dir}}, Columns: []string{"id"}}))
}

func expectOrder(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func testSortByTokens(t *testing.T, s usageStore) {
	seedUsage(t, s)
	// Ties (mini and early, 10,000 each) go by id descending.
	expectOrder(t, sortedBy(t, s, "summary.weave.total_tokens", "desc", 0, 0), "free", "mini", "early", "big", "mixed", "none")
	expectOrder(t, sortedBy(t, s, "summary.weave.total_tokens", "asc", 0, 0), "mixed", "big", "mini", "early", "free", "none")
}

func testSortByCostDefaults(t *testing.T, s usageStore) {
	seedUsage(t, s)
	expectOrder(t, sortedBy(t, s, "summary.weave.cost", "desc", 0, 0), "big", "mini", "early", "mixed", "free", "none")
	expectOrder(t, sortedBy(t, s, "summary.weave.cost", "asc", 0, 0), "free", "mixed", "mini", "early", "big", "none")
}

// testSortByCostOverride prices gpt-4o-mini at 0.001 a token from half
// an hour after base: mini (after) now leads, early (before) keeps the
// default price, as include_costs prices them. Another project's price
// changes nothing here.
func testSortByCostOverride(t *testing.T, s usageStore) {
	seedUsage(t, s)
	err := s.CreatePrices(context.Background(), []pricing.Price{
		price("e/p", "mini-1", "gpt-4o-mini", base.Add(30*time.Minute), 0.001),
		price("e/q", "q-1", "in-house-llm", base.Add(-24*time.Hour), 1),
	})
	if err != nil {
		t.Fatal(err)
	}
	expectOrder(t, sortedBy(t, s, "summary.weave.cost", "desc", 0, 0), "mini", "big", "early", "mixed", "free", "none")
}

func testSortByCostPages(t *testing.T, s usageStore) {
	seedUsage(t, s)
	expectOrder(t, sortedBy(t, s, "summary.weave.cost", "desc", 2, 0), "big", "mini")
	expectOrder(t, sortedBy(t, s, "summary.weave.cost", "desc", 2, 2), "early", "mixed")
	expectOrder(t, sortedBy(t, s, "summary.weave.cost", "desc", 2, 4), "free", "none")
}
