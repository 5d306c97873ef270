package storage

import (
	"context"
	"encoding/json"
	"time"
)

// MaxRateCounts bounds the rows one RateCounts read returns.
const MaxRateCounts = 100_000

// RateCount is what one inference gateway replica admitted for one limit
// in one window: the requests, and the tokens counted against it.
// Scope names the limit ("project:<entity/project>" or "key:<key id>");
// Window is the window's start.
type RateCount struct {
	Scope    string
	Window   time.Time
	Replica  string
	Requests int64
	Tokens   int64
}

// InferenceLimits is the gateway's limits and budgets as the admin API
// last set them: a document the gateway reads and validates itself.
type InferenceLimits struct {
	Doc       json.RawMessage
	UpdatedAt time.Time
	UpdatedBy string
}

// InferenceLimitsStore lets the inference gateway's replicas share their
// rate counts and the limits set through the admin API.
type InferenceLimitsStore interface {
	// PublishRateCounts records each count as its replica's figure for
	// its scope and window, replacing what that replica published before
	// for them. Counts of windows more than an hour old may be dropped.
	PublishRateCounts(ctx context.Context, counts []RateCount) error
	// RateCounts returns, per scope and window starting at or after
	// since, the sum of what every replica but exceptReplica published
	// (Replica is empty), ordered by scope and window, at most limit.
	RateCounts(ctx context.Context, since time.Time, exceptReplica string, limit int) ([]RateCount, error)
	// InferenceLimits returns the stored limits, or ErrNotFound when the
	// admin API never set them (or they were reset).
	InferenceLimits(ctx context.Context) (InferenceLimits, error)
	// PutInferenceLimits replaces the stored limits.
	PutInferenceLimits(ctx context.Context, l InferenceLimits) error
	// DeleteInferenceLimits resets them, so the configuration file's apply.
	DeleteInferenceLimits(ctx context.Context) error
}
