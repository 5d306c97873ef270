package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/weftdev/weft/storage"
)

// Config bounds the in-process queue and shapes its batches.
type Config struct {
	// MaxQueuedOps is the most call ops waiting to be written; beyond it
	// Submit answers ErrOverloaded. Default 100000.
	MaxQueuedOps int `yaml:"max_queued_ops"`
	// MaxQueuedBytes bounds the approximate payload bytes waiting. Default 64 MiB.
	MaxQueuedBytes int64 `yaml:"max_queued_bytes"`
	// MaxBatchOps is the most ops written in one storage transaction.
	// Default 5000.
	MaxBatchOps int `yaml:"max_batch_ops"`
	// BatchLinger is how long the writer waits for more requests to join a
	// batch that is not full. Zero (the default) writes at once: requests
	// that arrive during a write share the next one.
	BatchLinger time.Duration `yaml:"batch_linger"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{MaxQueuedOps: 100_000, MaxQueuedBytes: 64 << 20, MaxBatchOps: 5000}
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	switch {
	case c.MaxQueuedOps < 1:
		return errors.New("pipeline.max_queued_ops must be at least 1")
	case c.MaxQueuedBytes < 1:
		return errors.New("pipeline.max_queued_bytes must be at least 1")
	case c.MaxBatchOps < 1:
		return errors.New("pipeline.max_batch_ops must be at least 1")
	case c.BatchLinger < 0:
		return errors.New("pipeline.batch_linger must not be negative")
	}
	return nil
}

type request struct {
	ops     []storage.CallOp
	bytes   int64
	results []storage.CallOpResult
	done    chan error
}

// Queue is the embedded pipeline: a bounded queue feeding one writer that
// group-commits many requests per storage transaction.
type Queue struct {
	cfg    Config
	writer storage.CallWriter
	logger *slog.Logger

	mu          sync.Mutex
	queuedOps   int
	queuedBytes int64
	stopped     bool

	pending chan *request
	stopCh  chan struct{}
	wg      sync.WaitGroup
}

// NewQueue starts the writer goroutine. Call Stop to flush and end it.
func NewQueue(cfg Config, w storage.CallWriter, logger *slog.Logger) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	q := &Queue{
		cfg: cfg, writer: w, logger: logger,
		// Admission counts ops, and every request has at least one op, so
		// this capacity is never the limit that blocks a sender.
		pending: make(chan *request, cfg.MaxQueuedOps),
		stopCh:  make(chan struct{}),
	}
	q.wg.Add(1)
	go q.run()
	return q, nil
}

// Submit implements Submitter.
func (q *Queue) Submit(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	req := &request{ops: ops, bytes: opsBytes(ops), done: make(chan error, 1)}
	if err := q.admit(req); err != nil {
		return nil, err
	}
	q.pending <- req
	// Once queued the write happens even if the client goes away: what
	// was accepted is written, and a retry merges idempotently.
	select {
	case err := <-req.done:
		return req.results, err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for commit: %w", ctx.Err())
	}
}

func (q *Queue) admit(req *request) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return ErrStopped
	}
	if len(req.ops) > q.cfg.MaxQueuedOps || req.bytes > q.cfg.MaxQueuedBytes {
		return fmt.Errorf("%w: request has %d ops / %d bytes, above the queue bounds; split it", storage.ErrTooLarge, len(req.ops), req.bytes)
	}
	if q.queuedOps+len(req.ops) > q.cfg.MaxQueuedOps || q.queuedBytes+req.bytes > q.cfg.MaxQueuedBytes {
		return ErrOverloaded
	}
	q.queuedOps += len(req.ops)
	q.queuedBytes += req.bytes
	return nil
}

func (q *Queue) release(batch []*request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, r := range batch {
		q.queuedOps -= len(r.ops)
		q.queuedBytes -= r.bytes
	}
}

// Stop refuses new work, writes everything already accepted, and waits for
// the writer to finish or ctx to end.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	already := q.stopped
	q.stopped = true
	q.mu.Unlock()
	if !already {
		close(q.stopCh)
	}
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("flushing ingest queue: %w", ctx.Err())
	}
}

func opsBytes(ops []storage.CallOp) int64 {
	var n int64
	for _, op := range ops {
		n += 64
		if p := op.Part; p != nil {
			c := &p.Call
			n += int64(len(c.Attributes) + len(c.Inputs) + len(c.Output) + len(c.Summary) + len(c.OtelDump) + len(c.OpName))
		}
		if d := op.Delete; d != nil {
			n += int64(len(d.IDs) * 40)
		}
	}
	return n
}
