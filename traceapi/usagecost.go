package traceapi

import (
	"context"

	"github.com/weftdev/weft/storage"
)

// UsageCost prices a project's per-model usage buckets as include_costs
// and the aggregate API price calls (the project's prices, then the
// defaults, each bucket at its start): alert conditions on cost use it.
func UsageCost(ctx context.Context, src CallExtras, projectID string, usage []storage.ModelUsageBucket) (float64, error) {
	e := newEnricher(src, storage.CallsQuery{ProjectID: projectID, IncludeCosts: true})
	var total float64
	for _, u := range usage {
		_, cost, err := priceUsage(ctx, e, u)
		if err != nil {
			return 0, err
		}
		total += cost
	}
	return total, nil
}
