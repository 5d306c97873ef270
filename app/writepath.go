package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/exporter/kafkaexporter"
	"github.com/weftdev/weft/exporter/storageexporter"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/processor/batchprocessor"
	"github.com/weftdev/weft/processor/tracemetricsprocessor"
	"github.com/weftdev/weft/receiver/kafkareceiver"
	"github.com/weftdev/weft/storage"
)

// writePath is this process's write pipeline in the Collector's shape:
// receivers hand records to front (a batch processor), which hands them to
// an exporter: the storage exporter, or the Kafka producer in the ingest
// role. The process role's Kafka consumer is a receiver feeding a batch
// processor and storage exporter of its own.
type writePath struct {
	front consumer.Calls
	// barrier makes reads wait for acknowledged writes; nil when this
	// process does not write the store it reads.
	barrier func(context.Context) error
	// saturated reports that the store's backlog is nearly full, so
	// writes are refused before their bodies are read; nil: never.
	saturated func() bool
	// exp is the storage exporter of this process, nil when it has none
	// (ingest in front of Kafka): its health is the node's readiness.
	exp     *storageexporter.Exporter
	kafkaIn *kafkareceiver.Receiver
	// kafkaOTLP consumes the OTLP topic (kafka_otlp); nil when off.
	kafkaOTLP *kafkareceiver.Receiver
	// traceMetrics counts stored calls (trace_metrics); nil when off or
	// when this process stores no calls.
	traceMetrics *tracemetricsprocessor.Processor
	// parts start in order (exporters before the processors feeding
	// them) and shut down in reverse, in the server's list of parts.
	parts []namedPart
	// tap wraps the calls writer the storage exporter writes through.
	tap func(storage.CallWriter) storage.CallWriter
}

// buildWritePath assembles the pipeline for the configured roles.
// tap wraps the store's calls writer for the storage exporter.
func buildWritePath(ctx context.Context, cfg config.Config, roles config.Roles, store backend, tap func(storage.CallWriter) storage.CallWriter,
	backendName string, m *telemetry.Metrics, logger *slog.Logger) (*writePath, error) {
	w := &writePath{front: stoppedFront{}, tap: tap}
	if len(cfg.BrokerList()) == 0 {
		front, exp, err := w.storageChain(ctx, cfg, store, backendName, "", m, logger)
		if err != nil {
			return nil, err
		}
		w.front, w.barrier, w.saturated, w.exp = replayGate{next: front, replaying: exp.Replaying}, exp.Barrier, exp.Saturated, exp
		return w, nil
	}
	if cfg.Kafka.CreateTopics {
		if err := kafkabase.EnsureTopics(ctx, cfg.Kafka, logger); err != nil {
			return nil, fmt.Errorf("kafka topics: %w", err)
		}
	}
	if roles.Ingest {
		if err := w.kafkaChain(ctx, cfg, m, logger); err != nil {
			return nil, err
		}
		w.front = deleteCounter{next: w.front, calls: store}
	}
	if roles.Process {
		front, exp, err := w.storageChain(ctx, cfg, store, backendName, "process", m, logger)
		if err != nil {
			return nil, err
		}
		w.barrier, w.exp = exp.Barrier, exp
		if w.kafkaIn, err = kafkareceiver.NewReceiver(settings(kafkareceiver.Type(), "process", m, logger), cfg.Kafka, front); err != nil {
			return nil, fmt.Errorf("kafka receiver: %w", err)
		}
		if w.kafkaOTLP, err = newOTLPTopicReceiver(ctx, cfg, front, m, logger); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// storageChain is batch processor -> (trace metrics ->) storage exporter
// -> store.
func (w *writePath) storageChain(ctx context.Context, cfg config.Config, store backend, backendName, name string, m *telemetry.Metrics, logger *slog.Logger) (consumer.Calls, *storageexporter.Exporter, error) {
	exp, err := storageexporter.New(settings(storageexporter.Type(), name, m, logger), cfg.WALConfig(), w.tap(store), backendName)
	if err != nil {
		return nil, nil, err
	}
	w.parts = append(w.parts, namedPart{"storage exporter", exp})
	var next consumer.Calls = exp
	if cfg.TraceMetrics.Enabled {
		set := settings(tracemetricsprocessor.Type(), name, m, logger)
		if w.traceMetrics, err = tracemetricsprocessor.New(set, cfg.TraceMetrics, exp, store, nil); err != nil {
			return nil, nil, err
		}
		w.parts = append(w.parts, namedPart{"trace metrics", w.traceMetrics})
		next = w.traceMetrics
	}
	proc, err := batchprocessor.New(settings(batchprocessor.Type(), name, m, logger), cfg.Pipeline, next)
	if err != nil {
		return nil, nil, err
	}
	w.parts = append(w.parts, namedPart{"batch processor", proc})
	return proc, exp, nil
}

// setDefaultPrices gives trace metrics the default price table once the
// gateway has added its models' prices to it.
func (w *writePath) setDefaultPrices(t *pricing.Table) {
	if w.traceMetrics != nil {
		w.traceMetrics.SetDefaultPrices(t)
	}
}

// kafkaChain is batch processor -> Kafka producer, the ingest role's path.
func (w *writePath) kafkaChain(ctx context.Context, cfg config.Config, m *telemetry.Metrics, logger *slog.Logger) error {
	prod, err := kafkaexporter.NewProducer(settings(kafkaexporter.Type(), "ingest", m, logger), cfg.Kafka)
	if err != nil {
		return fmt.Errorf("kafka producer: %w", err)
	}
	proc, err := batchprocessor.New(settings(batchprocessor.Type(), "ingest", m, logger), cfg.Pipeline, prod)
	if err != nil {
		return errors.Join(err, prod.Stop(ctx))
	}
	w.parts = append(w.parts, namedPart{"kafka producer", prod}, namedPart{"batch processor", proc})
	w.front = proc
	return nil
}

func settings(typ component.Type, name string, m *telemetry.Metrics, logger *slog.Logger) telemetry.Settings {
	id := component.NewID(typ)
	if name != "" {
		id = component.NewIDWithName(typ, name)
	}
	return telemetry.Settings{ID: id, Logger: logger.With("component", id.String()), Metrics: m}
}

// namedPart is a part and the name errors give it.
type namedPart struct {
	name string
	c    component.Component
}

// stoppedFront answers 503 in a process without the ingest role; no
// receiver route is registered there, so it is only a safety net.
type stoppedFront struct{}

func (stoppedFront) ConsumeCalls(context.Context, []storage.CallOp) ([]storage.CallOpResult, error) {
	return nil, consumer.ErrStopped
}

// replayGate refuses writes at once while the storage exporter stores the
// write-ahead log of an earlier run: storage.ErrUnavailable, which every
// receiver answers as 503 with Retry-After (UNAVAILABLE with RetryInfo on
// gRPC), before the batch processor queues them. The exporter refuses
// them too; this only answers sooner. Accepting them behind the replay
// would let a client's writes pile up on a node that is not ready and that
// may take minutes to get there (or longer, with its store down), and
// every read would wait for all of it; 503 sends the client's retry to a
// ready node, or to this one once /ready says so.
type replayGate struct {
	next      consumer.Calls
	replaying func() error
}

func (g replayGate) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if err := g.replaying(); err != nil {
		return nil, err
	}
	return g.next.ConsumeCalls(ctx, ops)
}

// health is the storage exporter's view of whether this node can take
// writes; false when the process has no storage exporter.
func (w *writePath) health() (storageexporter.Health, bool) {
	if w.exp == nil {
		return storageexporter.Health{}, false
	}
	return w.exp.Health(), true
}

// stopReplay ends a replay of the write-ahead log in progress, so that
// shutdown does not wait for it; the next start goes on with it.
func (w *writePath) stopReplay() {
	if w.exp != nil {
		w.exp.StopReplay()
	}
}
