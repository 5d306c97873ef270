package traceapi

import (
	"bytes"
	"context"
	"fmt"

	"github.com/weftdev/weft/storage"
)

// costField is the call field the store prices itself: sorting or
// filtering by it needs the project's candidate prices in the query.
const costField = "summary.weave.cost"

// withCostPrices gives q the prices include_costs would price its calls
// with, the project's rows and the default table, when the request body
// names summary.weave.cost (in sort_by or query). Naming it anywhere
// else only costs a lookup.
func (a *API) withCostPrices(ctx context.Context, q *storage.CallsQuery, body []byte) error {
	if !bytes.Contains(body, []byte(costField)) {
		return nil
	}
	if a.extras.Prices != nil {
		rows, err := a.extras.Prices.AllProjectPrices(ctx, q.ProjectID)
		if err != nil {
			return fmt.Errorf("prices for %s: %w", costField, err)
		}
		q.Prices = append(q.Prices, rows...)
	}
	if a.extras.Defaults != nil {
		q.Prices = append(q.Prices, a.extras.Defaults.All()...)
	}
	return nil
}
