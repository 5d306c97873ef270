package monitors

import (
	"context"
	"fmt"
	"time"

	"github.com/weftdev/weft/internal/backoff"
	"github.com/weftdev/weft/storage"
)

// enqueueAttempts and enqueuePause bound the tries to queue one write's
// calls before the write is reported failed.
const (
	enqueueAttempts = 3
	enqueuePause    = 50 * time.Millisecond
)

// QueueStore is the queue Tap writes.
type QueueStore interface {
	EnqueueMonitorCalls(ctx context.Context, calls []storage.MonitorCall) error
}

// Watcher tells whether a stored call is one a project's active
// monitors may score.
type Watcher interface {
	Wants(projectID, callID string) bool
}

// Tap wraps the store's call writer: after a write it queues the calls
// whose end it carried, in projects with active monitors, and reports the
// write as failed if it could not. The write path then tries the write
// again, which merges idempotently, and counts it stored only after both;
// a crash in between replays them. Projects without monitors cost a map
// lookup per op; a call no monitor samples is not queued.
type Tap struct {
	storage.CallWriter
	queue   QueueStore
	watcher Watcher
	now     func() time.Time
}

// NewTap wraps w.
func NewTap(w storage.CallWriter, queue QueueStore, watcher Watcher, now func() time.Time) *Tap {
	return &Tap{CallWriter: w, queue: queue, watcher: watcher, now: now}
}

// WriteCallOps implements storage.CallWriter.
func (t *Tap) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	res, err := t.CallWriter.WriteCallOps(ctx, ops)
	if err != nil {
		return res, err
	}
	var queued []storage.MonitorCall
	var now time.Time
	for _, op := range ops {
		if op.Part == nil || !op.Part.Kind.HasEnd() || !t.watcher.Wants(op.Part.Call.ProjectID, op.Part.Call.ID) {
			continue
		}
		if queued == nil {
			now = t.now().UTC()
		}
		queued = append(queued, storage.MonitorCall{ProjectID: op.Part.Call.ProjectID, CallID: op.Part.Call.ID, QueuedAt: now, NextAt: now})
	}
	if len(queued) == 0 {
		return res, nil
	}
	// A failed queueing fails the write, which the write path stores
	// again; a few quick tries first keep a passing hiccup from costing a
	// whole transaction.
	var qerr error
	for attempt := range enqueueAttempts {
		if qerr = t.queue.EnqueueMonitorCalls(ctx, queued); qerr == nil {
			return res, nil
		}
		if !backoff.Sleep(ctx, time.Duration(attempt+1)*enqueuePause) {
			break
		}
	}
	return nil, fmt.Errorf("queue %d stored calls for their monitors: %w", len(queued), qerr)
}

// The write path asks its store whether writes need a checkpoint and
// whether it takes writes at all; Tap answers as the store it wraps.

// CallsNeedCheckpoint implements storage.CallCheckpointer.
func (t *Tap) CallsNeedCheckpoint() bool {
	c, ok := t.CallWriter.(storage.CallCheckpointer)
	return ok && c.CallsNeedCheckpoint()
}

// CheckpointCalls implements storage.CallCheckpointer.
func (t *Tap) CheckpointCalls(ctx context.Context) error {
	if c, ok := t.CallWriter.(storage.CallCheckpointer); ok {
		return c.CheckpointCalls(ctx)
	}
	return nil
}

// TryCheckpointCalls implements storage.CallCheckpointDeferrer.
func (t *Tap) TryCheckpointCalls(ctx context.Context) (bool, error) {
	if d, ok := t.CallWriter.(storage.CallCheckpointDeferrer); ok {
		return d.TryCheckpointCalls(ctx)
	}
	return true, t.CheckpointCalls(ctx)
}

// ProbeWrites asks the wrapped store whether it takes writes.
func (t *Tap) ProbeWrites(ctx context.Context) error {
	if p, ok := t.CallWriter.(interface{ ProbeWrites(context.Context) error }); ok {
		return p.ProbeWrites(ctx)
	}
	_, err := t.CallWriter.WriteCallOps(ctx, nil)
	return err
}
