package consumer

import (
	"context"
	"errors"

	"github.com/weftdev/weft/storage"
)

// Kind is what a write path error means to the client that sent the
// records: the one table the HTTP and gRPC answers and the retry
// decisions derive from.
type Kind int

// The kinds, from the client's side.
const (
	// KindOther is an error of no known kind: the server's fault.
	KindOther Kind = iota
	// KindInvalid: the records can never be written as sent (400,
	// INVALID_ARGUMENT).
	KindInvalid
	// KindTooLarge: a request or record above a bound on its own; split
	// it (413).
	KindTooLarge
	// KindOverloaded: a bounded queue is full; retry later (429,
	// RESOURCE_EXHAUSTED).
	KindOverloaded
	// KindUnavailable: the pipeline is stopping, the store is down, or
	// the wait was cut off; retry later, elsewhere if need be (503,
	// UNAVAILABLE).
	KindUnavailable
)

// Classify reads err's kind.
func Classify(err error) Kind {
	switch {
	case err == nil:
		return KindOther
	case errors.Is(err, storage.ErrInvalidArgument):
		return KindInvalid
	case errors.Is(err, storage.ErrTooLarge):
		return KindTooLarge
	case errors.Is(err, ErrOverloaded):
		return KindOverloaded
	case errors.Is(err, ErrStopped), errors.Is(err, storage.ErrUnavailable),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindUnavailable
	}
	return KindOther
}

// Retryable reports whether the same records may succeed if sent again
// later: a full queue, a stopping pipeline or a store that is down.
func (k Kind) Retryable() bool { return k == KindOverloaded || k == KindUnavailable }

// Retryable is Classify(err).Retryable().
func Retryable(err error) bool { return Classify(err).Retryable() }
