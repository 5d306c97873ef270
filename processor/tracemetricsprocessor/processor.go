// Package tracemetricsprocessor counts the calls the pipeline stores
// into Prometheus metrics of the traced applications themselves: calls,
// their duration, status, tokens and cost per project, op and model
// (weft_app_*), bounded in series, and pushes the same values as OTLP
// metrics when configured. It sits between the batch processor and the
// storage exporter, where the parts of a call written together are
// already merged, and counts a call once its end is stored.
//
// It must never import receivers, exporters or storage backends.
package tracemetricsprocessor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
)

// Processor counts finished calls on their way to the exporter; see the
// package doc.
type Processor struct {
	cfg    Config
	next   consumer.Calls
	logger *slog.Logger
	f      *families
	prices *priceCache
	push   *pusher // nil: no OTLP push

	mu     sync.Mutex
	series *series
	open   *openCalls
	usage  []modelUsage // scratch for one summary

	stopPrices context.CancelFunc
	pricesDone chan struct{}
}

// Type is the processor's component type, as metric labels show it.
func Type() component.Type { return component.MustNewType("tracemetrics") }

// New builds a processor feeding next. prices reads project prices (nil:
// defaults only); defaults is the default price table.
func New(set telemetry.Settings, cfg Config, next consumer.Calls, prices PriceSource, defaults *pricing.Table) (*Processor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if next == nil {
		return nil, fmt.Errorf("trace metrics processor %s: no next consumer", set.ID)
	}
	f := newFamilies()
	p := &Processor{cfg: cfg, next: next, logger: set.Logger, f: f,
		prices: newPriceCache(prices, defaults, 2*cfg.MaxProjects, set.Logger),
		series: newSeries(f, cfg), open: newOpenCalls(cfg.MaxOpenCalls)}
	if cfg.OTLPEndpoint != "" {
		p.push = newPusher(cfg, f.registry, set.Logger)
	}
	return p, nil
}

// Gatherer is the trace metrics' registry, to serve where tenants'
// project names may be shown.
func (p *Processor) Gatherer() prometheus.Gatherer { return p.f.registry }

// SetDefaultPrices replaces the default price table (the gateway adds its
// models' prices after the pipeline is built).
func (p *Processor) SetDefaultPrices(t *pricing.Table) { p.prices.defaults.Store(t) }

// Start implements component.Component: it starts the price reader and
// the OTLP push.
func (p *Processor) Start(ctx context.Context, _ component.Host) error {
	if p.pricesDone != nil {
		return nil
	}
	pctx, cancel := context.WithCancel(context.Background())
	p.stopPrices, p.pricesDone = cancel, make(chan struct{})
	go func() {
		defer close(p.pricesDone)
		if p.prices.source != nil {
			p.prices.run(pctx)
		}
	}()
	if p.push != nil {
		if err := p.push.start(ctx); err != nil {
			return errors.Join(err, p.Shutdown(ctx))
		}
	}
	return nil
}

// Shutdown implements component.Component: it stops the price reader and
// pushes the final values. The processors feeding it have flushed first.
func (p *Processor) Shutdown(ctx context.Context) error {
	if p.stopPrices != nil {
		p.stopPrices()
		<-p.pricesDone
	}
	if p.push != nil {
		return p.push.shutdown(ctx)
	}
	return nil
}

// ConsumeCalls implements consumer.Calls: it hands ops on and counts them
// once they are stored.
func (p *Processor) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	results, err := p.next.ConsumeCalls(ctx, ops)
	if err == nil {
		p.observe(ops, time.Now())
	}
	return results, err
}

// observe counts the calls ops finish and remembers the ones they start.
func (p *Processor) observe(ops []storage.CallOp, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range ops {
		if part := ops[i].Part; part != nil {
			p.observePart(part, now)
		}
	}
}

func (p *Processor) observePart(part *storage.CallPart, now time.Time) {
	c := &part.Call
	key := keyOf(c.ProjectID, c.ID)
	seen, known := p.open.get(key)
	if known && seen.ended {
		return // counted already: a retry, or a start after its end
	}
	if !part.Kind.HasEnd() {
		p.remember(key, known, openCall{op: c.OpName, started: unixNanos(c.StartedAt)})
		return
	}
	op, started := c.OpName, c.StartedAt
	if !part.Kind.HasStart() {
		op, started = seen.op, seen.startedAt() // zero when the start was not seen
	}
	p.remember(key, known, openCall{ended: true})
	p.count(c, op, started, now)
}

func (p *Processor) remember(key callKey, known bool, c openCall) {
	if known {
		p.open.update(key, c)
	} else if p.open.add(key, c) {
		p.f.overflow[boundOpenCalls].Inc()
	}
}

// count records one finished call: its op, status and duration, and the
// tokens and cost of each model in its summary.usage.
func (p *Processor) count(c *storage.Call, opName string, started, now time.Time) {
	ps := p.series.project(c.ProjectID)
	seconds := -1.0
	if !started.IsZero() && c.EndedAt != nil {
		if d := c.EndedAt.Sub(started); d >= 0 {
			seconds = d.Seconds()
		}
	}
	p.series.count(p.series.op(ps, opLabel(opName)), c.Exception != nil, seconds)
	if len(c.Summary) == 0 {
		return
	}
	p.usage = scanUsage(p.usage[:0], c.Summary)
	at := started
	if at.IsZero() && c.EndedAt != nil {
		at = *c.EndedAt
	}
	for _, u := range p.usage {
		m := p.series.model(ps, u.model)
		llmID := m.model
		if llmID == otherLabel { // past the bound: the series is shared, the price is the model's
			llmID = string(u.model)
		}
		price, priced := p.prices.best(c.ProjectID, llmID, at, now)
		var cost float64
		if priced && usd(price) {
			cost = price.Charge(u.tokens).Total()
		}
		p.series.use(m, u.tokens, cost, priced)
	}
}
