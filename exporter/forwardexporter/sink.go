package forwardexporter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
)

// Sink delivers call records upstream: the central Weft's Weave API
// (WeaveSink) or Kafka (KafkaSink).
type Sink interface {
	// Send delivers ops, in order, under the API key, and returns once the
	// upstream has accepted all of them, or with the error of the first
	// request that failed and how many ops before it were accepted (so
	// they are not sent again). A *PermanentError means the upstream
	// refused that request and will refuse it again; any other error may
	// pass, and a *RetryAfterError says when to try again.
	Send(ctx context.Context, key string, ops []storage.CallOp) (accepted int, err error)
	// SendOTLP delivers OTLP export requests (protobuf, concatenated: one
	// request holding all their resource spans) under the key and
	// project_id header, with Send's error classes. refused is the spans
	// the upstream accepted the request with but could not map, and msg
	// its reason.
	SendOTLP(ctx context.Context, key, project string, request []byte) (refused int, msg string, err error)
	// Close releases the sink's connections.
	Close(ctx context.Context) error
}

// PermanentError is an upstream refusal that retrying cannot fix (a 4xx
// such as a malformed record or a key without access to the project).
type PermanentError struct {
	// Status is the upstream's HTTP status, or 0 for a non-HTTP sink.
	Status int
	// Msg is the upstream's reason.
	Msg string
}

func (e *PermanentError) Error() string {
	if e.Status == 0 {
		return "upstream refused the records: " + e.Msg
	}
	return fmt.Sprintf("upstream refused the records with %d: %s", e.Status, e.Msg)
}

// RetryAfterError is an upstream asking to wait (429 or 503 with
// Retry-After) before the records are sent again.
type RetryAfterError struct {
	After time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("%v (retry after %s)", e.Err, e.After)
}

func (e *RetryAfterError) Unwrap() error { return e.Err }

func isPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// retryAfter is the wait the upstream asked for, or 0.
func retryAfter(err error) time.Duration {
	var r *RetryAfterError
	if errors.As(err, &r) {
		return r.After
	}
	return 0
}
