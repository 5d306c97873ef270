package pipeline

import (
	"context"
	"errors"

	"github.com/weftdev/weft/storage"
)

// ErrOverloaded means the queue is full; the caller should answer 429 with
// Retry-After and the client retries.
var ErrOverloaded = errors.New("ingest queue is full")

// ErrStopped means the pipeline is shutting down and takes no new work (503).
var ErrStopped = errors.New("ingest pipeline is stopping")

// Submitter is what receivers hand call writes to.
type Submitter interface {
	// Submit enqueues ops and waits until they are durable. It returns
	// ErrOverloaded at once when the queue is full, ErrStopped during
	// shutdown, or the storage error that failed the batch.
	Submit(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error)
}
