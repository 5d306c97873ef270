package storageexporter

// Health is what the exporter knows about whether the node can take
// writes, for a readiness probe.
type Health struct {
	// Replaying: the log of an earlier run is being stored; new batches
	// are refused until it is done. ReplayDone and ReplayTotal count its
	// log records (each a batch of call records).
	Replaying               bool
	ReplayDone, ReplayTotal uint64
	// StoreDown: a store write failed and so did a probe that involves
	// no record; the applier retries until the store takes writes again.
	StoreDown bool
	// Failures is how many store writes failed in a row (a record being
	// retried on its own counts too).
	Failures int
	// CheckpointFailed: the last checkpoint failed; the log keeps what
	// was stored since the one before until another succeeds.
	CheckpointFailed bool
	// Stopping: shutdown has begun.
	Stopping bool
}

// Ready reports that the node can take writes.
func (h Health) Ready() bool {
	return !h.Replaying && !h.StoreDown && !h.CheckpointFailed && !h.Stopping
}

// Health reports the exporter's state (see Health). Without the log the
// store is written directly and only Stopping is known.
func (e *Exporter) Health() Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := Health{
		StoreDown: e.storeDown, Failures: e.failures, CheckpointFailed: e.ckptFailed,
		Stopping: e.stopped,
	}
	if e.replaying {
		h.Replaying = true
		h.ReplayDone, h.ReplayTotal = e.applied-e.replayFrom, e.replayTo-e.replayFrom
	}
	return h
}
