package callrecord

import (
	"errors"
	"time"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
)

// submit hands a batch to the pipeline. Overload and unavailability are
// retried with backoff; a batch refused as invalid is split so that one
// bad call does not take the others with it.
func (r *Recorder) submit(batch []item) {
	ops := make([]storage.CallOp, len(batch))
	for i, it := range batch {
		ops[i] = it.op
	}
	if r.ctx.Err() != nil {
		r.losses.add(LostShutdown, len(ops))
		return
	}
	err := r.consume(ops)
	switch {
	case err == nil:
		r.metrics.Recorded.Add(float64(len(ops)))
	case r.ctx.Err() != nil:
		r.losses.add(LostShutdown, len(ops))
	case invalid(err) && len(batch) > 1:
		for _, it := range batch {
			r.submit([]item{it})
		}
	case invalid(err):
		r.logger.Error("inference: the ingest pipeline refused a gateway call's trace as invalid; that call is not traced (weft_inference_lost_calls{reason=\"invalid\"}); report it as a bug with this line", "project", ops[0].ProjectID(), "err", err)
		r.losses.add(LostInvalid, 1)
	default:
		r.losses.note(err)
		r.losses.add(LostRefused, len(ops))
	}
}

// consume tries the pipeline, retrying answers that say "later".
func (r *Recorder) consume(ops []storage.CallOp) error {
	wait := r.cfg.Backoff
	for attempt := 0; ; attempt++ {
		_, err := r.next.ConsumeCalls(r.ctx, ops)
		if err == nil || attempt >= r.cfg.Retries || !consumer.Retryable(err) {
			return err
		}
		select {
		case <-time.After(wait):
			wait *= 2
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

func invalid(err error) bool {
	return errors.Is(err, storage.ErrInvalidArgument) || errors.Is(err, storage.ErrTooLarge)
}
