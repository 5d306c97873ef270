package catalog

import (
	"time"

	"github.com/weftdev/weft/pricing"
)

// PriceCreator is the created_by of catalog prices, so cost readers can
// tell them from the shipped table.
const PriceCreator = "inference catalog"

// Prices are the catalog's token prices as default-level price rows keyed
// by model id, the key a traced call's summary.usage uses. Retired models
// keep theirs: their past calls still cost what they cost.
func (c *Catalog) Prices() []pricing.Price {
	out := make([]pricing.Price, 0, len(c.models))
	for _, m := range c.models {
		out = append(out, m.price())
	}
	return out
}

func (m *Model) price() pricing.Price {
	input := m.Prices.InputPerMillion / 1e6
	cached := input
	if m.Prices.CachedInputPerMillion != nil {
		cached = *m.Prices.CachedInputPerMillion / 1e6
	}
	// In effect for every call: the catalog states the price now, and
	// the gateway only traces calls it served under this catalog.
	since := time.Unix(0, 0).UTC()
	return pricing.Price{
		ID: "inference:" + m.ID, Level: pricing.LevelDefault, LevelID: pricing.DefaultLevelID,
		ProviderID: m.Upstreams[0].Provider.Name, LLMID: m.ID, EffectiveDate: since, CreatedAt: since,
		PromptTokenCost: input, CompletionTokenCost: m.Prices.OutputPerMillion / 1e6,
		CacheReadInputTokenCost: cached, CacheCreationInputTokenCost: input,
		PromptTokenCostUnit: pricing.UnitUSD, CompletionTokenCostUnit: pricing.UnitUSD, CreatedBy: PriceCreator,
	}
}
