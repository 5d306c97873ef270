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
	"sync/atomic"
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
}

// DefaultConfig holds the queue bounds given and the drain settings the
// gateway uses.
func DefaultConfig(maxCalls int, maxBytes int64) Config {
	return Config{MaxCalls: maxCalls, MaxBytes: maxBytes, MaxBatch: 500, Workers: 2, Retries: 3, Backoff: 100 * time.Millisecond}
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

	mu     sync.RWMutex // Record holds it shared, Shutdown alone to close ch
	closed bool
	ch     chan item
	bytes  atomic.Int64

	workers sync.WaitGroup
	abort   context.CancelFunc
	ctx     context.Context
}

// New builds a recorder feeding next.
func New(next consumer.Calls, cfg Config, m *Metrics, logger *slog.Logger) *Recorder {
	ctx, cancel := context.WithCancel(context.Background())
	return &Recorder{next: next, cfg: cfg, logger: logger, metrics: m, losses: newLossLog(logger, m),
		ch: make(chan item, cfg.MaxCalls), ctx: ctx, abort: cancel}
}

// Record queues one complete call and returns at once; a call that does
// not fit is dropped and counted.
func (r *Recorder) Record(c storage.Call) {
	it := item{op: storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}}, bytes: callBytes(c)}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		r.losses.add(LostShutdown, 1)
		return
	}
	if r.bytes.Add(it.bytes) > r.cfg.MaxBytes {
		r.bytes.Add(-it.bytes)
		r.losses.add(LostQueueFull, 1)
		return
	}
	select {
	case r.ch <- it:
		r.metrics.Queued.Inc()
	default:
		r.bytes.Add(-it.bytes)
		r.losses.add(LostQueueFull, 1)
	}
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
	for it := range r.ch {
		batch := []item{it}
	fill:
		for len(batch) < r.cfg.MaxBatch {
			select {
			case more, ok := <-r.ch:
				if !ok {
					break fill
				}
				batch = append(batch, more)
			default:
				break fill
			}
		}
		r.dequeued(batch)
		r.submit(batch)
	}
}

func (r *Recorder) dequeued(batch []item) {
	var n int64
	for _, it := range batch {
		n += it.bytes
	}
	r.bytes.Add(-n)
	r.metrics.Queued.Sub(float64(len(batch)))
}
