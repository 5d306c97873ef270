package storekit

import (
	"context"
	"encoding/json"

	"github.com/weftdev/weft/storage/tablesql"
)

// TableSQL runs tablesql queries (feedback, prices) on a backend, which
// renders them with its own dialect.
type TableSQL interface {
	// Rows runs a tablesql select and renders each row as JSON.
	Rows(ctx context.Context, t tablesql.Table, q tablesql.Query) ([]json.RawMessage, error)
	// Count runs a tablesql count.
	Count(ctx context.Context, t tablesql.Table, q tablesql.Query) (int64, error)
}
