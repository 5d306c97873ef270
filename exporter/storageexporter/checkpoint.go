package storageexporter

import (
	"context"
	"time"

	"github.com/weftdev/weft/storage"
)

// With a store whose call writes are durable only at a checkpoint
// (storage.CallCheckpointer), the log is the only copy of what was stored
// since the last one: the applied mark, and with it the log's trimming,
// waits for the checkpoint, so a crash replays those records. The embedded
// store then writes each call once, compressed, instead of first to its
// own write-ahead log: 97k instead of 80k calls/s on one core.

// checkpointBytes is how many decoded bytes are stored between
// checkpoints under load: about what DuckDB let its own log grow to
// before (checkpoint_threshold), which bounds the replay after a crash
// and the memory the uncheckpointed rows hold.
const checkpointBytes = 128 << 20

// idleCheckpoint is how soon after the backlog empties what was stored is
// checkpointed.
const idleCheckpoint = time.Second

// A checkpoint that a long read would hold up is put off (ADR 0020) while
// less than maxDeferredBytes are stored since the last one and for at most
// maxDeferral; past either, it waits for the read, which the store stops
// if it runs on too long. The bounds keep the replay after a crash and
// the memory of what is not yet checkpointed bounded: the embedded store
// holds those rows in its buffer pool, and a pool under pressure is where
// its native crash was reproduced (ADR 0020), so twice the usual amount.
const (
	maxDeferredBytes = 2 * checkpointBytes
	maxDeferral      = 2 * time.Minute
)

// checkpointer tracks what was stored since the last checkpoint. Only the
// applier uses it.
type checkpointer struct {
	store    storage.CallCheckpointer       // nil: writes are durable when stored
	deferrer storage.CallCheckpointDeferrer // nil: checkpoints are never put off
	seq      uint64                         // last stored sequence not yet checkpointed; 0 none
	bytes    int64
	// deferredSince is when the checkpoint was first put off; zero when
	// it was not.
	deferredSince time.Time
}

func newCheckpointer(store storage.CallWriter) checkpointer {
	if c, ok := store.(storage.CallCheckpointer); ok && c.CallsNeedCheckpoint() {
		d, _ := store.(storage.CallCheckpointDeferrer)
		return checkpointer{store: c, deferrer: d}
	}
	return checkpointer{}
}

// mayDefer reports whether a checkpoint due at now may still be put off.
func (c *checkpointer) mayDefer(now time.Time) bool {
	return c.deferrer != nil && c.bytes < maxDeferredBytes &&
		(c.deferredSince.IsZero() || now.Sub(c.deferredSince) < maxDeferral)
}

// stored records that the batches through seq, of rawBytes decoded bytes,
// are in the store, and checkpoints when enough has accumulated.
func (e *Exporter) stored(seq uint64, rawBytes int64) {
	if e.ckpt.store == nil {
		e.recordApplied(seq)
		return
	}
	e.ckpt.seq, e.ckpt.bytes = seq, e.ckpt.bytes+rawBytes
	if e.ckpt.bytes >= checkpointBytes {
		e.checkpoint(false)
	}
}

// checkpointRetry is how soon an idle applier tries a failed checkpoint
// again.
const checkpointRetry = 5 * time.Second

// checkpoint makes what was stored durable and moves the applied mark
// past it; false when it failed or, unless urgent, was put off. On failure
// the log keeps the records and the next checkpoint tries again; Health
// reports it meanwhile.
func (e *Exporter) checkpoint(urgent bool) bool {
	if e.ckpt.store == nil || e.ckpt.seq == 0 {
		return true
	}
	begin := time.Now()
	var err error
	if !urgent && e.ckpt.mayDefer(begin) {
		var done bool
		if done, err = e.ckpt.deferrer.TryCheckpointCalls(context.Background()); err == nil && !done {
			if e.ckpt.deferredSince.IsZero() {
				e.ckpt.deferredSince = begin
			}
			e.m.checkpointsDeferred.Inc()
			return false
		}
	} else {
		err = e.ckpt.store.CheckpointCalls(context.Background())
	}
	e.mu.Lock()
	e.ckptFailed = err != nil
	e.mu.Unlock()
	if err != nil {
		e.logger.Warn("storage exporter: checkpointing the store failed; the write-ahead log keeps the records until the next checkpoint; if it repeats, check the free space in data_dir", "err", err)
		return false
	}
	e.m.checkpointLatency.Observe(time.Since(begin).Seconds())
	e.recordApplied(e.ckpt.seq)
	e.ckpt.seq, e.ckpt.bytes, e.ckpt.deferredSince = 0, 0, time.Time{}
	return true
}
