// Package callrecord hands the gateway's traced calls to the ingest
// pipeline without making any request wait for it: calls queue in a buffer
// bounded in calls and bytes, and background workers drain it in batches
// into a consumer.Calls. When the buffer is full, or the pipeline refuses a
// batch after a few retries, calls are dropped, counted
// (weft_inference_lost_calls) and logged: never hidden, never blocking.
//
// It must never import receivers, processors, exporters or the query API;
// it only holds the consumer.Calls it is given.
package callrecord

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
)

// Config bounds the queue and shapes its draining.
type Config struct {
	MaxCalls int   // calls waiting at most
	MaxBytes int64 // their approximate payload bytes at most
	MaxBatch int   // calls handed to the pipeline at once
	Workers  int   // batches in flight at once
	Retries  int   // attempts after an overloaded or unavailable answer
	Backoff  time.Duration
	// Linger is how long a batch that is not full waits for more calls.
	// Each batch costs the pipeline a log write and a store transaction
	// whatever its size, and nobody waits for a trace, so a short wait
	// buys most of a request's tracing cost back. Zero sends at once.
	Linger time.Duration
}

// DefaultConfig holds the queue bounds given and the drain settings the
// gateway uses.
func DefaultConfig(maxCalls int, maxBytes int64) Config {
	return Config{MaxCalls: maxCalls, MaxBytes: maxBytes, MaxBatch: 500, Workers: 2, Retries: 3,
		Backoff: 100 * time.Millisecond, Linger: 100 * time.Millisecond}
}

// Loss reasons, the values of the reason label.
const (
	LostQueueFull = "queue_full"
	LostRefused   = "pipeline_refused"
	LostInvalid   = "invalid"
	LostShutdown  = "shutdown"
)

type item struct {
	op    storage.CallOp
	bytes int64
}

// Recorder queues calls for the pipeline. It is a component: Start runs
// the workers, Shutdown drains what is queued.
type Recorder struct {
	next    consumer.Calls
	cfg     Config
	logger  *slog.Logger
	metrics *Metrics
	losses  *lossLog

	mu     sync.Mutex // held to queue a call, and by Shutdown to close ch
	closed bool
	ch     chan item
	// queue bounds the calls in ch and their bytes; ch holds as many
	// calls as it admits, so a send never blocks.
	queue consumer.Admission
	// filling is held by the worker gathering the next batch, so batches
	// fill one at a time while others are being submitted.
	filling sync.Mutex

	workers sync.WaitGroup
	abort   context.CancelFunc
	ctx     context.Context
}

// New builds a recorder feeding next.
func New(next consumer.Calls, cfg Config, m *Metrics, logger *slog.Logger) *Recorder {
	ctx, cancel := context.WithCancel(context.Background())
	return &Recorder{next: next, cfg: cfg, logger: logger, metrics: m, losses: newLossLog(logger, m),
		ch: make(chan item, cfg.MaxCalls), ctx: ctx, abort: cancel,
		queue: consumer.NewAdmission(cfg.MaxCalls, cfg.MaxBytes, "inference.trace_queue_calls", "inference.trace_queue_bytes", m.Queued, nil)}
}

// Record queues one complete call and returns at once; a call that does
// not fit is dropped and counted.
func (r *Recorder) Record(c storage.Call) {
	it := item{op: storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}}, bytes: callBytes(c)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.losses.add(LostShutdown, 1)
		return
	}
	if r.queue.Admit(1, it.bytes) != nil {
		r.losses.add(LostQueueFull, 1)
		return
	}
	r.ch <- it
}

// callBytes approximates what a call holds in memory.
func callBytes(c storage.Call) int64 {
	return int64(len(c.Inputs)+len(c.Output)+len(c.Summary)+len(c.Attributes)+len(c.OpName)+len(c.ProjectID)) + 256
}

// Start implements component.Component.
func (r *Recorder) Start(context.Context, component.Host) error {
	for range max(r.cfg.Workers, 1) {
		r.workers.Add(1)
		go r.drain()
	}
	return nil
}

// Shutdown stops taking calls and hands the queued ones to the pipeline,
// until ctx ends; what is left then is counted as lost.
func (r *Recorder) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.ch)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.abort()
		<-done
	}
	r.abort()
	r.losses.flush()
	return nil
}

func (r *Recorder) drain() {
	defer r.workers.Done()
	for {
		batch, open := r.gather()
		if len(batch) > 0 {
			r.dequeued(batch)
			r.submit(batch)
		}
		if !open {
			return
		}
	}
}

// gather waits for a call, then takes more until the batch is full, the
// queue is empty (without Linger) or Linger has passed since the first.
// open is false once the queue is closed.
func (r *Recorder) gather() (batch []item, open bool) {
	r.filling.Lock()
	defer r.filling.Unlock()
	it, ok := <-r.ch
	if !ok {
		return nil, false
	}
	batch = append(make([]item, 0, min(r.cfg.MaxBatch, 64)), it)
	var linger <-chan time.Time
	if r.cfg.Linger > 0 {
		t := time.NewTimer(r.cfg.Linger)
		defer t.Stop()
		linger = t.C
	}
	for len(batch) < r.cfg.MaxBatch {
		more, got, open := r.take(linger)
		if !got {
			return batch, open
		}
		batch = append(batch, more)
	}
	return batch, true
}

// take takes a queued call, waiting for one until linger fires (not at
// all when linger is nil). got is false when there was none; open is
// false once the queue is closed.
func (r *Recorder) take(linger <-chan time.Time) (it item, got, open bool) {
	select {
	case it, open = <-r.ch:
		return it, open, open
	default:
	}
	if linger == nil {
		return item{}, false, true
	}
	select {
	case it, open = <-r.ch:
		return it, open, open
	case <-linger:
		return item{}, false, true
	}
}

func (r *Recorder) dequeued(batch []item) {
	var n int64
	for _, it := range batch {
		n += it.bytes
	}
	r.mu.Lock()
	r.queue.Release(len(batch), n)
	r.mu.Unlock()
}
