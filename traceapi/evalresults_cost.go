package traceapi

import (
	"context"
	"encoding/json"

	"github.com/weftdev/weft/storage"
)

// priceTrials sets each trial's total_cost from its usage, priced as
// include_costs prices calls (the project's prices, then the defaults),
// with one price lookup per model for the whole answer. A trial without
// usage, or whose models have no price, keeps a null cost.
func priceTrials(ctx context.Context, extras CallExtras, projectID string, rows []*evalResultsRow) error {
	e := newEnricher(extras, storage.CallsQuery{ProjectID: projectID, IncludeCosts: true})
	if !e.wantCosts {
		return nil
	}
	for _, row := range rows {
		for _, ev := range row.Evaluations {
			for _, t := range ev.Trials {
				cost, err := trialCost(ctx, e, t)
				if err != nil {
					return err
				}
				t.TotalCost = cost
			}
		}
	}
	return nil
}

func trialCost(ctx context.Context, e *enricher, t *evalResultsTrial) (*float64, error) {
	var s struct {
		Usage map[string]map[string]json.Number `json:"usage"`
	}
	if json.Unmarshal(t.usage, &s) != nil || len(s.Usage) == 0 {
		return nil, nil
	}
	var total float64
	priced := false
	for model, fields := range s.Usage {
		counts := make(map[string]int64, len(fields))
		for k, v := range fields {
			if n, err := v.Int64(); err == nil {
				counts[k] = n
			} else if f, err := v.Float64(); err == nil {
				counts[k] = int64(f)
			}
		}
		c, ok, err := modelCost(ctx, e, model, t.startedAt, counts)
		if err != nil {
			return nil, err
		}
		if ok {
			total += c.PromptTokensTotalCost + c.CompletionTokensTotalCost + c.CacheReadInputTokensTotalCost + c.CacheCreationInputTokensTotalCost
			priced = true
		}
	}
	if !priced {
		return nil, nil
	}
	return &total, nil
}
