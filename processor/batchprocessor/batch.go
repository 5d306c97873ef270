package batchprocessor

import (
	"context"
	"time"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
)

// exportTimeout bounds one export. The exporter gets a context of its own:
// a batch in progress must not be abandoned because one client went away.
const exportTimeout = 5 * time.Minute

// run is the batching goroutine: it collects a batch, exports it, answers
// every request in it, and repeats until stopped and drained.
func (p *Processor) run() {
	defer close(p.exited)
	for {
		batch, ok := p.collect()
		if len(batch) > 0 {
			p.export(batch)
			p.release(batch)
		}
		if !ok {
			return
		}
	}
}

// collect blocks for the first request, then takes whatever else is
// queued up to MaxBatchOps, lingering for more when configured. ok is
// false once the processor is stopped and everything admitted is done: a
// request admitted just before Shutdown is still on its way into pending,
// so the goroutine waits for it rather than leave its caller hanging.
func (p *Processor) collect() (batch []*request, ok bool) {
	var first *request
	select {
	case first = <-p.pending:
	case <-p.stopCh:
		if p.drained() {
			return nil, false
		}
		first = <-p.pending
	}
	batch = append(batch, first)
	ops := len(first.ops)
	var linger <-chan time.Time
	if p.cfg.BatchLinger > 0 {
		t := time.NewTimer(p.cfg.BatchLinger)
		defer t.Stop()
		linger = t.C
	}
	for ops < p.cfg.MaxBatchOps {
		r := p.next1(linger)
		if r == nil {
			break
		}
		batch = append(batch, r)
		ops += len(r.ops)
	}
	return batch, true
}

// next1 takes a queued request without waiting, or waits for one until
// linger fires when lingering; nil when there is none.
func (p *Processor) next1(linger <-chan time.Time) *request {
	select {
	case r := <-p.pending:
		return r
	default:
	}
	if linger == nil {
		return nil
	}
	select {
	case r := <-p.pending:
		return r
	case <-linger:
		return nil
	}
}

// export sends all requests as one batch. If that fails for a reason other
// than overload, shutdown or an unavailable store, each request is retried
// alone so that one bad request cannot fail the others in its batch.
func (p *Processor) export(batch []*request) {
	err := p.exportRequests(batch)
	if err == nil || len(batch) == 1 || consumer.Retryable(err) {
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	p.logger.Info("a batch export failed; each request is retried alone, so only a bad one fails and its client gets the error", "requests", len(batch), "err", err)
	for _, r := range batch {
		r.done <- p.exportRequests([]*request{r})
	}
}

func (p *Processor) exportRequests(batch []*request) error {
	var all []storage.CallOp
	for _, r := range batch {
		all = append(all, r.ops...)
	}
	merged, index := storage.MergeOps(all)
	p.gauges.batchSize.Observe(float64(len(merged)))
	ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
	defer cancel()
	results, err := p.next.ConsumeCalls(ctx, merged)
	if err != nil {
		return err
	}
	at := 0
	for _, r := range batch {
		r.results = make([]storage.CallOpResult, len(r.ops))
		for i := range r.ops {
			if j := index[at]; j < len(results) {
				r.results[i] = results[j]
			}
			at++
		}
	}
	return nil
}
