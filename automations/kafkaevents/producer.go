package kafkaevents

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/storage"
)

// Producer is the automations.EventSink of the API roles.
type Producer struct {
	w       *kafka.Writer
	timeout time.Duration
}

// NewProducer writes to topic on cfg's brokers. It does not contact
// Kafka; the first event does.
func NewProducer(cfg kafkabase.Config, topic string, logger *slog.Logger) *Producer {
	w := &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        topic,
		Balancer:     kafka.Murmur2Balancer{Consistent: true},
		RequiredAcks: kafka.RequireAll,
		// Events are few and each waits for its write; no batching delay.
		BatchTimeout:    time.Millisecond,
		MaxAttempts:     3,
		WriteBackoffMin: 50 * time.Millisecond,
		WriteBackoffMax: 500 * time.Millisecond,
		ReadTimeout:     cfg.RequestTimeout,
		WriteTimeout:    cfg.RequestTimeout,
		Transport:       cfg.Transport(),
		ErrorLogger:     kafkabase.NewLimitedLogger(logger).KafkaErrorLogger("automation events"),
	}
	return &Producer{w: w, timeout: cfg.Producer.AckTimeout}
}

// RecordEvents implements automations.EventSink: it returns once every
// in-sync replica has the events. A failure is storage.ErrUnavailable
// (503): the client retries, and the change it repeats is harmless.
func (p *Producer) RecordEvents(ctx context.Context, events []storage.ArtifactEvent) error {
	if len(events) == 0 {
		return nil
	}
	msgs := make([]kafka.Message, len(events))
	for i, e := range events {
		value, err := Encode(e)
		if err != nil {
			return err
		}
		msgs[i] = kafka.Message{Key: []byte(e.ProjectID), Value: value}
	}
	wctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := p.w.WriteMessages(wctx, msgs...); err != nil {
		return fmt.Errorf("kafka did not take the artifact events: %w: %w", storage.ErrUnavailable, err)
	}
	return nil
}

// Close flushes and closes the writer.
func (p *Producer) Close() error { return kafkabase.CloseWriter(p.w) }
