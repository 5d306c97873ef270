package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/pricing"
)

// TestCostsLongIDListsSpanParameters: id lists longer than one parameter
// carries are sent in chunks, and a chunk matching nothing does not end
// the work.
func TestCostsLongIDListsSpanParameters(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	at := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	var prices []pricing.Price
	for _, id := range []string{"p1", "p2"} {
		prices = append(prices, pricing.Price{ID: id, Level: pricing.LevelProject, LevelID: "e/p", ProviderID: "x",
			LLMID: "m-" + id, EffectiveDate: at, PromptTokenCostUnit: pricing.UnitUSD, CompletionTokenCostUnit: pricing.UnitUSD, CreatedAt: at})
	}
	if err := s.CreatePrices(ctx, prices); err != nil {
		t.Fatal(err)
	}
	unknown := make([]string, lookupChunk)
	for i := range unknown {
		unknown[i] = fmt.Sprintf("a%04d", i) // sorts before every stored id
	}
	llms, err := s.ProjectPrices(ctx, "e/p", append(slices.Clone(unknown), "m-p1", "m-p2"))
	if err != nil || len(llms) != 2 {
		t.Fatalf("prices of %d models: %d rows, %v; want 2", lookupChunk+2, len(llms), err)
	}
	if err := s.PurgePrices(ctx, "e/p", append(unknown, "p2")); err != nil {
		t.Fatal(err)
	}
	left, err := s.ProjectPrices(ctx, "e/p", []string{"m-p1", "m-p2"})
	if err != nil || len(left) != 1 || left[0].ID != "p1" {
		t.Fatalf("after purging p2 among %d unknown ids: %+v, %v", lookupChunk, left, err)
	}
}
