// Package consumer defines how Weft's pipeline components hand call records
// to one another, the way the OpenTelemetry Collector's consumer package
// joins receivers, processors and exporters: each component holds the next
// one as a consumer.Calls and calls ConsumeCalls. The call returns only when
// the records are durable (or refused), so a receiver can acknowledge its
// client on return.
//
// The Collector's own consumer interfaces carry pdata; Weft's records are
// Weave call parts, updates and deletes, which pdata cannot hold (see
// docs/adr/0010-collector-shaped-write-path.md).
//
// It imports nothing of Weft but storage, for the record types.
package consumer

import (
	"context"
	"errors"

	"github.com/weftdev/weft/storage"
)

// Calls consumes call records.
type Calls interface {
	// ConsumeCalls takes ops in order and returns once they are durable,
	// with one result per op. It returns ErrOverloaded at once when a
	// bounded buffer downstream is full, ErrStopped during shutdown,
	// storage.ErrInvalidArgument or storage.ErrTooLarge for records that
	// can never be written, and storage.ErrUnavailable (or another error)
	// when the write failed and may be retried.
	ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error)
}

// CallsFunc adapts a function to Calls.
type CallsFunc func(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error)

// ConsumeCalls implements Calls.
func (f CallsFunc) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	return f(ctx, ops)
}

// ErrOverloaded means a bounded buffer is full; receivers answer 429 (or
// gRPC RESOURCE_EXHAUSTED) with Retry-After and the client retries.
var ErrOverloaded = errors.New("ingest queue is full")

// ErrStopped means the pipeline is shutting down and takes no new work; it
// is answered as 503 with Retry-After.
var ErrStopped = errors.New("ingest pipeline is stopping")
