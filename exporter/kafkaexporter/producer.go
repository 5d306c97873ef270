package kafkaexporter

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/collector/component"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// Producer is the ingest role's consumer.Calls: it puts call ops on
// the topic and answers once Kafka has acknowledged them with acks=all.
type Producer struct {
	cfg    kafkabase.Config
	logger *kafkabase.LimitedLogger
	w      *kafka.Writer

	mu       sync.Mutex
	inOps    consumer.Admission // under mu: kafka.producer.max_in_flight_ops and _bytes
	stopped  bool
	inFlight sync.WaitGroup
	closeW   sync.Once
	closeErr error

	acked, failed atomic.Int64
}

// ProducerStats counts Submit outcomes since start.
type ProducerStats struct {
	AckedOps  int64 // ops Kafka acknowledged
	FailedOps int64 // ops of Submits that failed after admission
}

// Type is the producer's component type.
func Type() component.Type { return component.MustNewType("kafka") }

// NewProducer builds the producer and its one long-lived Kafka writer. It
// does not contact Kafka; the first Submit does.
func NewProducer(set telemetry.Settings, cfg kafkabase.Config) (*Producer, error) {
	logger := set.Logger
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	codec, _ := kafkabase.CompressionCodec(cfg.Compression)
	p := &Producer{cfg: cfg, logger: kafkabase.NewLimitedLogger(logger),
		inOps: consumer.NewAdmission(cfg.Producer.MaxInFlightOps, cfg.Producer.MaxInFlightBytes,
			"kafka.producer.max_in_flight_ops", "kafka.producer.max_in_flight_bytes", nil, nil)}
	p.w = &kafka.Writer{
		Addr:  kafka.TCP(cfg.Brokers...),
		Topic: cfg.Topic,
		// Murmur2 on the project key matches Kafka's Java default
		// partitioner, so other producers of this topic agree with us.
		Balancer:     kafka.Murmur2Balancer{Consistent: true},
		RequiredAcks: kafka.RequireAll,
		// Every Submit waits for its batch to leave: with kafka-go's 1s
		// default BatchTimeout each request would take a second.
		BatchTimeout: cfg.Producer.Linger,
		BatchSize:    cfg.Producer.BatchSize,
		BatchBytes:   int64(cfg.MaxMessageBytes),
		Compression:  codec,
		// Few quick retries: a longer outage is the client's to retry
		// after a 503, not something to hold its connection open for.
		MaxAttempts:     3,
		WriteBackoffMin: 50 * time.Millisecond,
		WriteBackoffMax: 500 * time.Millisecond,
		ReadTimeout:     cfg.RequestTimeout,
		WriteTimeout:    cfg.RequestTimeout,
		Transport:       cfg.Transport(),
		ErrorLogger:     p.logger.KafkaErrorLogger("producer"),
	}
	return p, nil
}

// Submit implements consumer.Calls. It returns nil only when Kafka
// has acknowledged every op (all in-sync replicas have them). Errors:
// consumer.ErrOverloaded beyond the in-flight bounds, consumer.ErrStopped
// after Stop, storage.ErrTooLarge for an op above max_message_bytes,
// storage.ErrInvalidArgument for an op that cannot be encoded, and
// storage.ErrUnavailable when Kafka did not acknowledge in time. After a
// failure some ops may still have been written; the client's retry is
// harmless because storage writes are idempotent.
//
// The processor computes a delete's num_deleted (descendants included)
// only later, so a delete's result here is the number of distinct ids
// requested.
func (p *Producer) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	msgs, size, err := p.encode(ops)
	if err != nil {
		return nil, err
	}
	if err := p.admit(len(ops), size); err != nil {
		return nil, err
	}
	defer p.release(len(ops), size)
	wctx, cancel := context.WithTimeout(ctx, p.cfg.Producer.AckTimeout)
	defer cancel()
	if err := p.w.WriteMessages(wctx, msgs...); err != nil {
		p.failed.Add(int64(len(ops)))
		return nil, p.classify(ctx, err)
	}
	p.acked.Add(int64(len(ops)))
	return results(ops), nil
}

func (p *Producer) encode(ops []storage.CallOp) ([]kafka.Message, int64, error) {
	msgs := make([]kafka.Message, len(ops))
	var size int64
	for i, op := range ops {
		value, err := kafkabase.Encode(op)
		if err != nil {
			return nil, 0, err
		}
		key := []byte(kafkabase.Key(op))
		if n := len(key) + len(value); n > p.cfg.MaxMessageBytes {
			return nil, 0, fmt.Errorf("%w: call op %d encodes to %d bytes, above kafka.max_message_bytes (%d); shrink the call's inputs or output, or raise the limit on the topic and in the config",
				storage.ErrTooLarge, i, n, p.cfg.MaxMessageBytes)
		}
		msgs[i] = kafka.Message{Key: key, Value: value}
		size += int64(len(key) + len(value))
	}
	return msgs, size, nil
}

func (p *Producer) admit(ops int, bytes int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return consumer.ErrStopped
	}
	if err := p.inOps.Admit(ops, bytes); err != nil {
		return err
	}
	p.inFlight.Add(1)
	return nil
}

func (p *Producer) release(ops int, bytes int64) {
	p.mu.Lock()
	p.inOps.Release(ops, bytes)
	p.mu.Unlock()
	p.inFlight.Done()
}

// classify maps a write error to the kinds the HTTP layer answers.
func (p *Producer) classify(ctx context.Context, err error) error {
	var tooLarge kafka.MessageTooLargeError
	switch {
	case ctx.Err() != nil:
		// The client went away; what it sent may still land.
		return fmt.Errorf("waiting for kafka ack: %w", ctx.Err())
	case errors.Is(err, io.ErrClosedPipe):
		return consumer.ErrStopped
	case errors.As(err, &tooLarge), errors.Is(err, kafka.MessageSizeTooLarge):
		return fmt.Errorf("%w: kafka refused the record as too large (raise max.message.bytes on topic %s): %w", storage.ErrTooLarge, p.cfg.Topic, err)
	}
	p.logger.Log(slog.LevelWarn, "produce", "kafka did not acknowledge call ops; the client gets 503 with Retry-After and retries; if it repeats, check that the brokers in kafka_brokers are up and enough replicas are in sync", "topic", p.cfg.Topic, "err", err)
	return fmt.Errorf("%w: kafka did not acknowledge the write: %w", storage.ErrUnavailable, err)
}

// results answers every op; a delete reports its distinct requested ids.
func results(ops []storage.CallOp) []storage.CallOpResult {
	out := make([]storage.CallOpResult, len(ops))
	for i, op := range ops {
		if op.Delete != nil {
			seen := make(map[string]struct{}, len(op.Delete.IDs))
			for _, id := range op.Delete.IDs {
				seen[id] = struct{}{}
			}
			out[i].NumDeleted = len(seen)
		}
	}
	return out
}

// Stats returns the counters since start.
func (p *Producer) Stats() ProducerStats {
	return ProducerStats{AckedOps: p.acked.Load(), FailedOps: p.failed.Load()}
}

// Stop refuses new Submits, waits for those in flight to be answered (or
// ctx to end), and closes the writer. It is safe to call more than once.
func (p *Producer) Stop(ctx context.Context) error {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.inFlight.Wait(); close(done) }()
	var waitErr error
	select {
	case <-done:
	case <-ctx.Done():
		waitErr = fmt.Errorf("waiting for in-flight kafka writes: %w", ctx.Err())
	}
	p.closeW.Do(func() { p.closeErr = kafkabase.CloseWriter(p.w) })
	if waitErr != nil {
		return waitErr
	}
	if p.closeErr != nil {
		return fmt.Errorf("close kafka writer: %w", p.closeErr)
	}
	return nil
}

// Start implements component.Component; the producer contacts Kafka on
// its first Submit.
func (p *Producer) Start(context.Context, component.Host) error { return nil }

// Shutdown implements component.Component: it is Stop.
func (p *Producer) Shutdown(ctx context.Context) error { return p.Stop(ctx) }
