package app

import (
	"context"
	"iter"

	"github.com/weftdev/weft/storage"
)

// consistentReads makes every calls and threads read wait for the writes
// acknowledged before it began: with the write-ahead log, an acknowledged
// write may still be on its way into the store.
type consistentReads struct {
	backend
	barrier func(context.Context) error // nil: nothing to wait for
}

func (r consistentReads) wait(ctx context.Context) error {
	if r.barrier == nil {
		return nil
	}
	return r.barrier(ctx)
}

// QueryCalls implements storage.CallReader.
func (r consistentReads) QueryCalls(ctx context.Context, q storage.CallsQuery) iter.Seq2[storage.StoredCall, error] {
	return func(yield func(storage.StoredCall, error) bool) {
		if err := r.wait(ctx); err != nil {
			yield(storage.StoredCall{}, err)
			return
		}
		for c, err := range r.backend.QueryCalls(ctx, q) {
			if !yield(c, err) {
				return
			}
		}
	}
}

// CountCalls implements storage.CallReader.
func (r consistentReads) CountCalls(ctx context.Context, q storage.CallsQuery, limit int64) (storage.CallsStats, error) {
	if err := r.wait(ctx); err != nil {
		return storage.CallsStats{}, err
	}
	return r.backend.CountCalls(ctx, q, limit)
}

// QueryThreads implements storage.ThreadReader.
func (r consistentReads) QueryThreads(ctx context.Context, q storage.ThreadsQuery) iter.Seq2[storage.Thread, error] {
	return func(yield func(storage.Thread, error) bool) {
		if err := r.wait(ctx); err != nil {
			yield(storage.Thread{}, err)
			return
		}
		for row, err := range r.backend.QueryThreads(ctx, q) {
			if !yield(row, err) {
				return
			}
		}
	}
}

// AggregateCalls implements storage.CallsAggregator.
func (r consistentReads) AggregateCalls(ctx context.Context, q storage.CallsAggregateQuery) (storage.CallsAggregate, error) {
	if err := r.wait(ctx); err != nil {
		return storage.CallsAggregate{}, err
	}
	return r.backend.AggregateCalls(ctx, q)
}

// ListProjects implements storage.ProjectLister.
func (r consistentReads) ListProjects(ctx context.Context, entity string) ([]storage.ProjectSummary, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	return r.backend.ListProjects(ctx, entity)
}

// ProjectStats implements storage.ProjectStatsReader.
func (r consistentReads) ProjectStats(ctx context.Context, projectID string) (storage.ProjectStats, error) {
	if err := r.wait(ctx); err != nil {
		return storage.ProjectStats{}, err
	}
	return r.backend.ProjectStats(ctx, projectID)
}
