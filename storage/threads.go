package storage

import (
	"context"
	"iter"
	"time"
)

// ThreadsQuery is a threads query, already authorised for ProjectID.
type ThreadsQuery struct {
	ProjectID string
	// AfterDatetime and BeforeDatetime bound turn start times, exclusive.
	AfterDatetime  *time.Time
	BeforeDatetime *time.Time
	// ThreadIDs nil means every thread; an empty list matches nothing.
	ThreadIDs []string
	// SortBy nil or empty means last_updated descending. Fields are
	// thread_id, turn_count, start_time, last_updated,
	// p50_turn_duration_ms and p99_turn_duration_ms.
	SortBy []SortBy
	Limit  int64 // 0 = no limit
	Offset int64
}

// Thread is one thread of a threads query: the aggregate of its turn
// calls (visible calls whose id is their turn id), at least one of which
// has ended.
type Thread struct {
	ThreadID    string
	TurnCount   int64
	StartTime   time.Time // earliest turn start, UTC
	LastUpdated time.Time // latest turn end, UTC
	FirstTurnID string    // the turn that started first
	LastTurnID  string    // the turn that ended last
	// P50TurnDurationMS and P99TurnDurationMS are linearly interpolated
	// quantiles of the ended turns' durations in milliseconds; nil when
	// the engine has none.
	P50TurnDurationMS *float64
	P99TurnDurationMS *float64
}

// ThreadReader answers threads queries, scoped to the query's project.
type ThreadReader interface {
	// QueryThreads streams the project's threads in the requested order.
	// The sequence stops at the first error, which it yields; a bad sort
	// or too long a filter list is ErrInvalidArgument.
	QueryThreads(ctx context.Context, q ThreadsQuery) iter.Seq2[Thread, error]
}
