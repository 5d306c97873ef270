package storekit

import (
	"context"
	"encoding/json"

	"github.com/weftdev/weft/storage/sqlgen"
)

// TableSQL runs sqlgen table queries (feedback, prices) on a backend, which
// renders them with its own dialect.
type TableSQL interface {
	// Rows runs a sqlgen table select and renders each row as JSON.
	Rows(ctx context.Context, t sqlgen.Table, q sqlgen.TableQuery) ([]json.RawMessage, error)
	// Count runs a sqlgen table count.
	Count(ctx context.Context, t sqlgen.Table, q sqlgen.TableQuery) (int64, error)
}
