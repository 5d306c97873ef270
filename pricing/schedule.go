package pricing

import (
	"slices"
	"time"
)

// Span is the price Best picks for one model's calls started in
// [From, To): a zero From is open below, a zero To open above.
type Span struct {
	LLMID    string
	From, To time.Time
	Price    Price
}

// Schedule lays out, per model, which of prices Best picks for a call
// started at any time, as spans sorted by model then start. Best only
// changes its answer at an effective date (a price comes into effect), so
// asking it once before the first date and once at every date gives
// every span; neighbours with the same price are merged. A store can
// then price a call with a range lookup instead of ranking candidates.
func Schedule(prices []Price) []Span {
	dates := map[string][]time.Time{}
	for _, p := range prices {
		dates[p.LLMID] = append(dates[p.LLMID], p.EffectiveDate)
	}
	models := make([]string, 0, len(dates))
	for id := range dates {
		models = append(models, id)
	}
	slices.Sort(models)
	var out []Span
	for _, id := range models {
		out = append(out, modelSpans(id, dates[id], prices)...)
	}
	return out
}

func modelSpans(llmID string, dates []time.Time, prices []Price) []Span {
	slices.SortFunc(dates, time.Time.Compare)
	dates = slices.CompactFunc(dates, time.Time.Equal)
	first, _ := Best(llmID, dates[0].Add(-time.Nanosecond), prices)
	spans := []Span{{LLMID: llmID, Price: first}}
	for _, d := range dates {
		p, _ := Best(llmID, d, prices)
		last := &spans[len(spans)-1]
		if p == last.Price {
			continue
		}
		last.To = d
		spans = append(spans, Span{LLMID: llmID, From: d, Price: p})
	}
	return spans
}

// All returns every row of the table, by model then file order.
func (t *Table) All() []Price {
	ids := make([]string, 0, len(t.byLLM))
	for id := range t.byLLM {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return t.For(ids)
}
