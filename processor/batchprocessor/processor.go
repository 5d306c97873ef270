package batchprocessor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// request is one ConsumeCalls call waiting for its batch.
type request struct {
	ops     []storage.CallOp
	bytes   int64
	results []storage.CallOpResult
	done    chan error
}

// Processor admits, batches and merges call records; see the package doc.
type Processor struct {
	cfg    Config
	next   consumer.Calls
	logger *slog.Logger
	gauges queueGauges

	mu       sync.Mutex
	admitted consumer.Admission // under mu
	started  bool
	stopped  bool

	// pending holds admitted requests. Admission counts ops and every
	// request has at least one, so its capacity never blocks a sender.
	pending chan *request
	stopCh  chan struct{}
	exited  chan struct{}
}

type queueGauges struct {
	refused   prometheus.Counter
	batchSize prometheus.Observer
}

func newProcessor(set telemetry.Settings, cfg Config, next consumer.Calls) *Processor {
	id := set.ID.String()
	m := set.Metrics
	m.ProcessorQueueCapacity.WithLabelValues(id).Set(float64(cfg.MaxQueuedOps))
	return &Processor{
		cfg: cfg, next: next, logger: set.Logger,
		gauges: queueGauges{refused: m.ProcessorRefusedCalls.WithLabelValues(id), batchSize: m.BatchSendSize.WithLabelValues(id)},
		admitted: consumer.NewAdmission(cfg.MaxQueuedOps, cfg.MaxQueuedBytes, "pipeline.max_queued_ops", "pipeline.max_queued_bytes",
			m.ProcessorQueueSize.WithLabelValues(id), m.ProcessorQueueBytes.WithLabelValues(id)),
		pending: make(chan *request, cfg.MaxQueuedOps),
		stopCh:  make(chan struct{}),
		exited:  make(chan struct{}),
	}
}

// Start implements component.Component: it starts the batching goroutine.
func (p *Processor) Start(context.Context, component.Host) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return nil
	}
	p.started = true
	go p.run()
	return nil
}

// ConsumeCalls implements consumer.Calls. Once admitted, the records are
// exported even if ctx ends first: what was accepted is written, and a
// client's retry merges idempotently.
func (p *Processor) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	req := &request{ops: ops, bytes: OpsBytes(ops), done: make(chan error, 1)}
	if err := p.admit(req); err != nil {
		p.gauges.refused.Add(float64(len(ops)))
		return nil, err
	}
	p.pending <- req
	select {
	case err := <-req.done:
		return req.results, err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the batch to be durable: %w", ctx.Err())
	}
}

func (p *Processor) admit(req *request) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || !p.started {
		return consumer.ErrStopped
	}
	return p.admitted.Admit(len(req.ops), req.bytes)
}

func (p *Processor) release(batch []*request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range batch {
		p.admitted.Release(len(r.ops), r.bytes)
	}
}

// drained reports that nothing admitted is waiting to be picked up. Only
// the batching goroutine asks, between batches.
func (p *Processor) drained() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ops, _ := p.admitted.Held()
	return ops == 0
}

// Shutdown implements component.Component: it refuses new work, exports
// everything already admitted, and waits for that or ctx.
func (p *Processor) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	already, started := p.stopped, p.started
	p.stopped = true
	p.mu.Unlock()
	if !started {
		return nil
	}
	if !already {
		close(p.stopCh)
	}
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("flushing the batch processor: %w", ctx.Err())
	}
}

// OpsBytes approximates the payload bytes of ops for admission bounds.
func OpsBytes(ops []storage.CallOp) int64 {
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
