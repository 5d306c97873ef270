package storageexporter

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/internal/wal"
	"github.com/weftdev/weft/storage"
)

// Exporter writes call batches to a store, through the write-ahead log
// when enabled. See the package doc.
type Exporter struct {
	cfg    Config
	store  storage.CallWriter
	logger *slog.Logger
	m      exporterMetrics

	log *wal.Log // nil without the write-ahead log
	// appendMu keeps log order and pending order the same.
	appendMu sync.Mutex

	mu      sync.Mutex
	pending []*logged // in the log, not yet in the store, in log order
	handed  int       // how many of pending the applier has taken
	// backlog bounds pending by wal.max_unapplied_ops and _bytes.
	backlog  consumer.Admission
	acked    uint64        // last sequence number in pending or applied
	applied  uint64        // last sequence number in the store
	progress chan struct{} // closed and replaced after each apply
	started  bool
	stopped  bool
	// leaving: shutdown ran out of time; the applier stops after the
	// store write in hand and leaves the rest in the log for the next
	// start. leaveCtx ends with it, which ends retries and their pauses.
	leaving  bool
	leaveCtx context.Context
	leave    context.CancelFunc
	// replaying: the log holds records after replayFrom, through
	// replayTo, that an earlier run acknowledged but did not store (or
	// checkpoint); the applier stores them before anything new, which is
	// refused meanwhile (see replay.go). replayStopped: shutdown ended the
	// replay first. replayCtx ends the replay.
	replaying            bool
	replayStopped        bool
	replayFrom, replayTo uint64
	replayCtx            context.Context
	stopReplay           context.CancelFunc
	// The applier's view of the store, for Health: store writes that
	// failed in a row, whether the last probe found the store taking no
	// writes, whether the last checkpoint failed.
	failures   int
	storeDown  bool
	ckptFailed bool
	wake       chan struct{}
	exited     chan struct{}
	// ckpt tracks stored calls awaiting the store's checkpoint; the
	// applier's alone (see checkpoint.go).
	ckpt checkpointer
}

// logged is one acknowledged batch waiting for the store. Its records are
// read back from the log when applied, not kept in memory.
type logged struct {
	seq uint64
	ops int
	// bytes is the record's size in the log, which the backlog bound
	// counts; rawBytes its decoded size, which bounds a transaction.
	bytes, rawBytes int64
	// done is set when the caller waits for the store's results (a
	// delete answers how many calls it deleted).
	done    chan error
	results []storage.CallOpResult
}

type exporterMetrics struct {
	sent, failed        prometheus.Counter
	sendLatency         prometheus.Observer
	writeLatency        prometheus.Observer
	checkpointLatency   prometheus.Observer
	checkpointsDeferred prometheus.Counter
	written, rejected   prometheus.Counter
}

func newExporter(set telemetry.Settings, cfg Config, store storage.CallWriter, backend string) *Exporter {
	id, mt := set.ID.String(), set.Metrics
	if cfg.Enabled {
		mt.ExporterQueueCapacity.WithLabelValues(id).Set(float64(cfg.MaxUnappliedOps))
		mt.ExporterQueueCapacityBytes.WithLabelValues(id).Set(float64(cfg.MaxUnappliedBytes))
	}
	cfg = cfg.withDefaults()
	e := &Exporter{
		cfg: cfg, store: store, logger: set.Logger,
		backlog: consumer.NewAdmission(cfg.MaxUnappliedOps, cfg.MaxUnappliedBytes, "wal.max_unapplied_ops", "wal.max_unapplied_bytes",
			mt.ExporterQueueSize.WithLabelValues(id), mt.ExporterQueueBytes.WithLabelValues(id)),
		m: exporterMetrics{
			sent: mt.ExporterSentCalls.WithLabelValues(id), failed: mt.ExporterSendFailedCalls.WithLabelValues(id),
			sendLatency:         mt.ExporterSendLatency.WithLabelValues(id),
			writeLatency:        mt.StorageWriteLatency.WithLabelValues(backend),
			checkpointLatency:   mt.StorageCheckpointLatency.WithLabelValues(backend),
			checkpointsDeferred: mt.StorageCheckpointsDeferred.WithLabelValues(backend),
			written:             mt.StorageWrittenCalls.WithLabelValues(backend), rejected: mt.StorageRejectedOps.WithLabelValues(backend),
		},
		ckpt:     newCheckpointer(store),
		progress: make(chan struct{}),
		wake:     make(chan struct{}, 1),
		exited:   make(chan struct{}),
	}
	e.leaveCtx, e.leave = context.WithCancel(context.Background())
	e.replayCtx, e.stopReplay = context.WithCancel(e.leaveCtx)
	return e
}

// Start implements component.Component: it opens the log and starts the
// applier, which first stores whatever an earlier run acknowledged but
// did not store (the replay, see replay.go). It does not wait for that:
// until the replay is done new batches get storage.ErrUnavailable.
func (e *Exporter) Start(_ context.Context, _ component.Host) error {
	e.mu.Lock()
	e.started = true
	e.mu.Unlock()
	if !e.cfg.Enabled {
		close(e.exited)
		return nil
	}
	l, err := wal.Open(e.cfg.Dir, wal.Options{SegmentBytes: e.cfg.SegmentBytes})
	if err != nil {
		return fmt.Errorf("storage exporter: %w", err)
	}
	e.log = l
	after, last := readApplied(e.cfg.Dir), l.LastSeq()
	from := min(after, last)
	e.mu.Lock()
	e.acked, e.applied = last, from
	e.replaying, e.replayFrom, e.replayTo = from < last, from, last
	e.mu.Unlock()
	if from < last {
		e.logger.Info("storage exporter: storing the write-ahead log of an earlier run before new writes", "log_records", last-from)
	} else if e.ckpt.store == nil {
		e.recordApplied(last)
	}
	go e.applyLoop()
	return nil
}

// Replaying is the error new batches get while the log of an earlier run
// is being stored: storage.ErrUnavailable, saying how far it is; nil once
// it is done.
func (e *Exporter) Replaying() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.replayRefusal()
}

// replayRefusal is Replaying with mu held.
func (e *Exporter) replayRefusal() error {
	if !e.replaying {
		return nil
	}
	return fmt.Errorf("%w: storing the write-ahead log of an earlier run (%d of %d log records); retry later",
		storage.ErrUnavailable, e.applied-e.replayFrom, e.replayTo-e.replayFrom)
}

// StopReplay ends a replay in progress after the store write in hand;
// the rest waits in the log for the next start, and Barrier's waiters for
// replayed records get consumer.ErrStopped. Shutdown does the same; a
// server calls it before draining its listeners, so that reads waiting
// for the replay do not hold the drain.
func (e *Exporter) StopReplay() { e.stopReplay() }

// ConsumeCalls implements consumer.Calls.
func (e *Exporter) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if err := validateOps(ops); err != nil {
		e.m.failed.Add(float64(len(ops)))
		return nil, err
	}
	begin := time.Now()
	var results []storage.CallOpResult
	var err error
	if e.cfg.Enabled {
		results, err = e.consumeLogged(ctx, ops)
	} else {
		results, err = e.writeDirect(ctx, ops)
	}
	if err != nil {
		e.m.failed.Add(float64(len(ops)))
		return nil, err
	}
	e.m.sendLatency.Observe(time.Since(begin).Seconds())
	e.m.sent.Add(float64(len(ops)))
	return results, nil
}

func (e *Exporter) writeDirect(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if !e.isRunning() {
		return nil, consumer.ErrStopped
	}
	return e.write(ctx, ops)
}

// write is one store transaction, measured.
func (e *Exporter) write(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	begin := time.Now()
	res, err := e.store.WriteCallOps(ctx, ops)
	if err == nil {
		e.m.writeLatency.Observe(time.Since(begin).Seconds())
		e.m.written.Add(float64(len(ops)))
	}
	return res, err
}

func (e *Exporter) isRunning() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started && !e.stopped
}

// consumeLogged appends the batch to the log and queues it for the
// applier. Only a batch with a delete waits for the store, because its
// result (how many calls were deleted) comes from there.
func (e *Exporter) consumeLogged(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	raw := encodeOps(make([]byte, 0, sizeHint(ops)), ops)
	rec := compressRecord(raw)
	b := &logged{ops: len(ops), bytes: int64(len(rec)), rawBytes: int64(len(raw))}
	if hasDelete(ops) {
		b.done = make(chan error, 1)
	}
	e.appendMu.Lock()
	if err := e.admit(b); err != nil {
		e.appendMu.Unlock()
		return nil, err
	}
	seq, err := e.log.Append(rec)
	if err != nil {
		e.appendMu.Unlock()
		e.unadmit(b)
		return nil, fmt.Errorf("%w: write-ahead log: %w", storage.ErrUnavailable, err)
	}
	b.seq = seq
	e.enqueue(b)
	e.appendMu.Unlock()
	if b.done == nil {
		return make([]storage.CallOpResult, len(ops)), nil
	}
	select {
	case err := <-b.done:
		return b.results, err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the delete to be applied: %w", ctx.Err())
	}
}

func hasDelete(ops []storage.CallOp) bool {
	for _, op := range ops {
		if op.Delete != nil {
			return true
		}
	}
	return false
}

// admit reserves room for b in the bounded backlog.
func (e *Exporter) admit(b *logged) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case !e.started || e.stopped:
		return consumer.ErrStopped
	case e.replaying:
		return e.replayRefusal()
	}
	return e.backlog.Admit(b.ops, b.bytes)
}

func (e *Exporter) unadmit(b *logged) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.backlog.Release(b.ops, b.bytes)
}

func (e *Exporter) enqueue(b *logged) {
	e.mu.Lock()
	e.pending = append(e.pending, b)
	e.acked = b.seq
	e.mu.Unlock()
	e.poke()
}

// Saturated reports that the backlog is nine tenths full: receivers can
// then turn requests away before reading and decoding them, which would
// only be refused after that work, and leave the CPU to the store.
func (e *Exporter) Saturated() bool {
	if !e.cfg.Enabled {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.backlog.Nearly(9, 10)
}

// Barrier returns once every batch acknowledged before the call is in the
// store, so a read that follows sees it.
func (e *Exporter) Barrier(ctx context.Context) error {
	e.mu.Lock()
	target := e.acked
	for e.applied < target {
		if e.replayStopped {
			e.mu.Unlock()
			return fmt.Errorf("%w: shutdown came before the write-ahead log of an earlier run was stored", consumer.ErrStopped)
		}
		ch := e.progress
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for acknowledged writes to reach the store: %w", ctx.Err())
		}
		e.mu.Lock()
	}
	e.mu.Unlock()
	return nil
}

// Shutdown implements component.Component: it refuses new batches, lets
// the applier store what the log holds, and closes the log. A replay in
// progress ends after the store write in hand (the next start goes on
// with it). If ctx ends first the applier stops after the write in hand:
// the rest is durable in the log and stored on the next Start, so that is
// not an error.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.stopped = true
	started := e.started
	e.mu.Unlock()
	e.stopReplay()
	if !started || e.log == nil {
		e.leave()
		return nil
	}
	e.poke()
	select {
	case <-e.exited:
	case <-ctx.Done():
		e.mu.Lock()
		e.leaving = true
		left, _ := e.backlog.Held()
		e.mu.Unlock()
		e.leave()
		e.poke()
		<-e.exited
		e.logger.Info("storage exporter: shutdown time is up; the log keeps the rest for the next start", "records", left)
	}
	e.leave()
	return e.log.Close()
}

func (e *Exporter) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
