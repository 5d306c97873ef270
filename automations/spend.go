package automations

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// KeyIDAttribute is where a call traced by the inference gateway names
// the API key it was made with.
const KeyIDAttribute = "attributes.inference.key_id"

// Spend is the cost of projectID's calls started in [start, end), of
// keyID's calls alone when it is not "", priced as cost alerts and
// include_costs price them. The inference gateway's budgets read it.
func (m Measurer) Spend(ctx context.Context, projectID, keyID string, start, end time.Time) (float64, error) {
	q := storage.CallsQuery{ProjectID: projectID}
	if keyID != "" {
		doc, err := json.Marshal(map[string]any{"$expr": map[string]any{"$eq": []any{
			map[string]any{"$getField": KeyIDAttribute}, map[string]any{"$literal": keyID}}}})
		if err != nil {
			return 0, fmt.Errorf("spend query: %w", err)
		}
		if q.Where, err = querylang.DefaultLimits().Parse(doc); err != nil {
			return 0, fmt.Errorf("spend query: %w", err)
		}
	}
	start, end = start.UTC(), end.UTC()
	span := int64(end.Sub(start)/time.Second) + 1
	agg, err := m.Calls.AggregateCalls(ctx, storage.CallsAggregateQuery{Calls: q, Start: start, End: end, BucketSeconds: span})
	if err != nil {
		return 0, err
	}
	if m.Price == nil || len(agg.Usage) == 0 {
		return 0, nil
	}
	return m.Price(ctx, projectID, agg.Usage)
}
