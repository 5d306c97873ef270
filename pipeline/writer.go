package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/weftdev/weft/storage"
)

// run is the single writer: it collects a batch, writes it, answers every
// request in it, and repeats until stopped and drained.
func (q *Queue) run() {
	defer q.wg.Done()
	for {
		batch, ok := q.collect()
		if len(batch) > 0 {
			q.writeBatch(batch)
			q.release(batch)
		}
		if !ok {
			return
		}
	}
}

// collect blocks for the first request, then takes whatever else is queued
// up to MaxBatchOps, lingering for more when configured. ok is false once
// the queue is stopped and empty.
func (q *Queue) collect() (batch []*request, ok bool) {
	var first *request
	select {
	case first = <-q.pending:
	case <-q.stopCh:
		select {
		case first = <-q.pending:
		default:
			return nil, false
		}
	}
	batch = append(batch, first)
	ops := len(first.ops)
	var linger <-chan time.Time
	if q.cfg.BatchLinger > 0 {
		t := time.NewTimer(q.cfg.BatchLinger)
		defer t.Stop()
		linger = t.C
	}
	for ops < q.cfg.MaxBatchOps {
		select {
		case r := <-q.pending:
			batch = append(batch, r)
			ops += len(r.ops)
			continue
		default:
		}
		if linger == nil {
			break
		}
		select {
		case r := <-q.pending:
			batch = append(batch, r)
			ops += len(r.ops)
			continue
		case <-linger:
		}
		break
	}
	return batch, true
}

// writeBatch writes all requests in one transaction. If that fails for a
// reason other than an unavailable store, each request is retried alone so
// one bad request cannot fail the others that shared its batch.
func (q *Queue) writeBatch(batch []*request) {
	err := q.writeRequests(batch)
	if err == nil || len(batch) == 1 || errors.Is(err, storage.ErrUnavailable) {
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	q.logger.Warn("batch write failed; retrying requests one by one", "requests", len(batch), "err", err)
	for _, r := range batch {
		r.done <- q.writeRequests([]*request{r})
	}
}

func (q *Queue) writeRequests(batch []*request) error {
	var all []storage.CallOp
	for _, r := range batch {
		all = append(all, r.ops...)
	}
	merged, index := storage.MergeOps(all)
	// Storage gets its own context: an acknowledged-in-progress batch must
	// not be abandoned because one client disconnected.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	results, err := q.writer.WriteCallOps(ctx, merged)
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
