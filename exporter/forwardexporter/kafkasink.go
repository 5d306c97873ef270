package forwardexporter

import (
	"context"
	"errors"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
)

// KafkaSink forwards call records straight to the call topic through the
// ingest role's producer (next), which answers once Kafka has them with
// acks=all. The process role then treats them as any ingest's records.
// Kafka checks no API key: an agent that forwards to Kafka is trusted with
// every project, as an ingest role is.
type KafkaSink struct {
	next consumer.Calls
	stop func(context.Context) error
}

// NewKafkaSink sends through next (a kafkaexporter.Producer) and calls
// stop on Close.
func NewKafkaSink(next consumer.Calls, stop func(context.Context) error) *KafkaSink {
	return &KafkaSink{next: next, stop: stop}
}

// Send implements Sink.
func (s *KafkaSink) Send(ctx context.Context, _ string, ops []storage.CallOp) (int, error) {
	_, err := s.next.ConsumeCalls(ctx, ops)
	switch {
	case err == nil:
		return len(ops), nil
	case errors.Is(err, storage.ErrTooLarge), errors.Is(err, storage.ErrInvalidArgument):
		return 0, &PermanentError{Msg: err.Error()}
	}
	return 0, err
}

// Close implements Sink.
func (s *KafkaSink) Close(ctx context.Context) error { return s.stop(ctx) }

// SendOTLP implements Sink. An agent forwarding to Kafka maps spans to
// calls when it receives them, so it buffers no OTLP.
func (s *KafkaSink) SendOTLP(context.Context, string, string, []byte) (int, string, error) {
	return 0, "", &PermanentError{Msg: "OTLP requests cannot be forwarded to the call topic; they are mapped to calls on receipt"}
}
