package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/pipeline"
	"github.com/weftdev/weft/pipeline/kafkaqueue"
	"github.com/weftdev/weft/storage"
)

// ingest is where receivers hand call writes: the in-process queue, or
// Kafka in scale-out mode. Stop flushes what was accepted.
type ingest interface {
	pipeline.Submitter
	Stop(ctx context.Context) error
}

// stoppedIngest answers 503 in a process without the ingest role; no
// receiver route is registered there, so it is only a safety net.
type stoppedIngest struct{}

func (stoppedIngest) Submit(context.Context, []storage.CallOp) ([]storage.CallOpResult, error) {
	return nil, pipeline.ErrStopped
}

func (stoppedIngest) Stop(context.Context) error { return nil }

// openIngest builds the write path of this process: with Kafka, a producer
// (ingest role) and a processor (process role); without, the in-process
// queue writing straight to the store.
func openIngest(ctx context.Context, cfg config.Config, roles config.Roles, w storage.CallWriter, logger *slog.Logger) (ingest, *kafkaqueue.Processor, error) {
	if len(cfg.BrokerList()) == 0 {
		q, err := pipeline.NewQueue(cfg.Pipeline, w, logger)
		return q, nil, err
	}
	if cfg.Kafka.CreateTopics {
		if err := kafkaqueue.EnsureTopics(ctx, cfg.Kafka, logger); err != nil {
			return nil, nil, fmt.Errorf("kafka topics: %w", err)
		}
	}
	var in ingest = stoppedIngest{}
	if roles.Ingest {
		p, err := kafkaqueue.NewProducer(cfg.Kafka, logger)
		if err != nil {
			return nil, nil, fmt.Errorf("kafka producer: %w", err)
		}
		in = p
	}
	if !roles.Process {
		return in, nil, nil
	}
	proc, err := kafkaqueue.NewProcessor(cfg.Kafka, w, logger)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("kafka processor: %w", err), in.Stop(ctx))
	}
	return in, proc, nil
}
