package kafkareceiver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/backoff"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/storage"
)

// item is a decoded record and the message it came from: one call op, or
// one per span of an OTLP record.
type item struct {
	msg kafka.Message
	ops []storage.CallOp
}

// handle writes one batch, sets aside what can never be written, and
// commits. It reports false when it stopped before committing.
func (p *Receiver) handle(ctx context.Context, r *kafka.Reader, batch []kafka.Message) bool {
	items, letters := p.decodeBatch(batch)
	rejected, ok := p.store(ctx, items)
	if !ok {
		return false
	}
	letters = append(letters, rejected...)
	if len(letters) > 0 && !p.deadLetter(ctx, letters) {
		return false
	}
	p.commit(ctx, r, batch)
	p.metrics.observe(batch)
	p.stats.batches.Add(1)
	p.stats.records.Add(int64(len(batch)))
	return true
}

// decodeBatch decodes each record. One that cannot be decoded at all is a
// dead letter; one of which only some spans could be mapped has its calls
// written and is also dead-lettered with the reason, so nothing is dropped
// silently (replaying it later rewrites the same calls, harmlessly).
func (p *Receiver) decodeBatch(batch []kafka.Message) ([]item, []letter) {
	items := make([]item, 0, len(batch))
	var letters []letter
	for _, m := range batch {
		ops, partial, err := p.decode(m)
		if err != nil {
			letters = append(letters, letter{msg: m, reason: err.Error()})
			continue
		}
		if partial != "" {
			letters = append(letters, letter{msg: m, reason: partial})
		}
		if len(ops) > 0 {
			items = append(items, item{msg: m, ops: ops})
		}
	}
	return items, letters
}

// decodeEnvelope reads a record of the call topic: one op (ADR 0006).
func decodeEnvelope(m kafka.Message) ([]storage.CallOp, string, error) {
	op, err := kafkabase.Decode(m.Value)
	if err != nil {
		return nil, "", err
	}
	return []storage.CallOp{op}, "", nil
}

// store writes items in order. A transient failure is retried after a
// pause, without committing, for as long as it lasts; a permanent one
// (storage.ErrInvalidArgument, storage.ErrTooLarge) splits the items to
// find the records storage rejects even alone, which are returned for the
// dead-letter topic. ok is false when ctx ended before the items were
// written.
func (p *Receiver) store(ctx context.Context, items []item) (rejected []letter, ok bool) {
	if len(items) == 0 {
		return nil, true
	}
	err := p.attempt(ctx, "write", func(ctx context.Context) error { return p.write(ctx, items) })
	switch {
	case err == nil:
		return nil, true
	case errors.Is(err, errStopped):
		return nil, false
	}
	if len(items) == 1 {
		return []letter{{msg: items[0].msg, reason: "storage rejected the op: " + err.Error()}}, true
	}
	// Halving keeps the order of the ops and finds k bad records among n
	// in about k*log2(n) writes instead of n.
	mid := len(items) / 2
	left, ok := p.store(ctx, items[:mid])
	if !ok {
		return nil, false
	}
	right, ok := p.store(ctx, items[mid:])
	return append(left, right...), ok
}

func (p *Receiver) write(ctx context.Context, items []item) error {
	ops := make([]storage.CallOp, 0, len(items))
	for i := range items {
		ops = append(ops, items[i].ops...)
	}
	if _, err := p.next.ConsumeCalls(ctx, ops); err != nil {
		return fmt.Errorf("write %d call ops: %w", len(ops), err)
	}
	return nil
}

// errStopped: ctx ended while a failed write waited for its retry.
var errStopped = errors.New("stopped before the write succeeded")

// attempt runs fn until it succeeds or fails permanently, pausing with
// backoff between transient failures, and returns fn's last error or
// errStopped when ctx ended during a pause. The first try runs even after
// ctx ended, so shutdown finishes the batch in hand; fn gets a context
// that outlives ctx, bounded by write_timeout.
func (p *Receiver) attempt(ctx context.Context, key string, fn func(context.Context) error) error {
	for n := 0; ; n++ {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.Consumer.WriteTimeout)
		err := fn(wctx)
		cancel()
		if err == nil || permanent(err) {
			return err
		}
		p.stats.writeRetries.Add(1)
		p.limited.Log(slog.LevelWarn, key, "processor write failed; the records stay in Kafka uncommitted and are retried with backoff (kafka.consumer.retry_backoff_max); if it repeats, check ClickHouse (clickhouse_dsn) for a write, or the brokers (kafka_brokers) for a dead-letter",
			"what", key, "attempt", n+1, "err", err)
		if !p.pause(ctx, n) {
			return fmt.Errorf("%w: %w", errStopped, err)
		}
	}
}

// permanent reports errors that retrying the same op cannot fix. Every
// other error, unknown ones included, is treated as an outage: dropping a
// healthy batch is worse than waiting.
func permanent(err error) bool {
	return errors.Is(err, storage.ErrInvalidArgument) || errors.Is(err, storage.ErrTooLarge)
}

// pause waits the n-th backoff (doubling from retry_backoff_min up to
// retry_backoff_max, with jitter so replicas do not retry in step). It
// reports false when ctx ended first.
func (p *Receiver) pause(ctx context.Context, n int) bool {
	c := p.cfg.Consumer
	return backoff.Sleep(ctx, backoff.Jittered(n, c.RetryBackoffMin, c.RetryBackoffMax))
}

// commit stores the batch's offsets. A failure (Kafka down, or the
// partitions moved in a rebalance) is logged, not retried: the records
// are redelivered and rewritten idempotently.
func (p *Receiver) commit(ctx context.Context, r *kafka.Reader, batch []kafka.Message) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.RequestTimeout)
	defer cancel()
	if err := r.CommitMessages(cctx, batch...); err != nil {
		p.stats.commitErrors.Add(1)
		p.limited.Log(slog.LevelWarn, "commit", "offset commit failed; the batch will be redelivered and rewritten (harmless); if it repeats, check that the brokers in kafka_brokers are up",
			"records", len(batch), "err", err)
	}
}
