package kafkareceiver

import (
	"context"
	"errors"
	"go.opentelemetry.io/collector/component"
	"log/slog"
	"sync/atomic"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// Receiver is the process role: one member of the consumer group that
// reads call ops, writes them to storage in batches, and commits offsets
// only after the write succeeded. Run several (in one or many processes)
// to share the topic's partitions.
type Receiver struct {
	// Loop runs Run between Start and Shutdown: the receiver is a
	// component of the process.
	*lifecycle.Loop
	// fatal is told when Run ends by itself with an error; nil logs it.
	fatal   func(error)
	cfg     kafkabase.Config
	next    consumer.Calls
	logger  *slog.Logger
	limited *kafkabase.LimitedLogger
	dlq     *kafka.Writer
	started atomic.Bool
	stats   receiverCounters
	metrics receiverMetrics
	// decode turns a record into call ops; see decodeBatch.
	decode func(kafka.Message) (ops []storage.CallOp, partial string, err error)
}

// Stats counts what a processor did since it started.
type Stats struct {
	// Batches is the number of batches handled and committed past.
	Batches int64
	// Records is the number of records handled (written or dead-lettered).
	Records int64
	// DeadLettered is the number of records sent to the dead-letter topic.
	DeadLettered int64
	// WriteRetries counts failed attempts (storage writes and dead-letter
	// writes) that were retried after a pause.
	WriteRetries int64
	// CommitErrors counts offset commits that failed; their records are
	// redelivered and rewritten idempotently.
	CommitErrors int64
}

type receiverCounters struct {
	batches, records, deadLettered, writeRetries, commitErrors atomic.Int64
}

// Type is the receiver's component type.
func Type() component.Type { return component.MustNewType("kafka") }

// NewReceiver builds a processor handing batches to next (the batch
// processor in front of the storage exporter). It does not contact Kafka
// until Run.
func NewReceiver(set telemetry.Settings, cfg kafkabase.Config, next consumer.Calls) (*Receiver, error) {
	logger := set.Logger
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if next == nil {
		return nil, errors.New("kafkareceiver: processor needs a next consumer")
	}
	p := &Receiver{cfg: cfg, next: next, logger: logger, limited: kafkabase.NewLimitedLogger(logger), decode: decodeEnvelope}
	p.dlq = &kafka.Writer{
		Addr:  kafka.TCP(cfg.Brokers...),
		Topic: cfg.DeadLetterTopic,
		// Nothing waits on dead letters but the commit of their batch;
		// a short linger keeps that commit prompt.
		Balancer:     kafka.Murmur2Balancer{Consistent: true},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: cfg.Producer.Linger,
		BatchBytes:   int64(cfg.MaxMessageBytes) + kafkabase.DeadLetterOverhead,
		MaxAttempts:  3,
		ReadTimeout:  cfg.RequestTimeout,
		WriteTimeout: cfg.RequestTimeout,
		Transport:    cfg.Transport(),
		ErrorLogger:  p.limited.KafkaErrorLogger("dead-letter producer"),
	}
	if set.Metrics != nil {
		p.instrument(set.Metrics)
	}
	p.Loop = lifecycle.NewLoop("kafka consumer of "+cfg.Topic, logger, p.Run, lifecycle.WithFatal(func(err error) {
		if p.fatal != nil {
			p.fatal(err)
			return
		}
		logger.Error("kafka consumer of "+cfg.Topic+" stopped; records wait in the topic until weft restarts; restart weft, and check the brokers if it repeats", "err", err)
	}))
	return p, nil
}

// Stats returns the counters since start.
func (p *Receiver) Stats() Stats {
	c := &p.stats
	return Stats{
		Batches: c.batches.Load(), Records: c.records.Load(), DeadLettered: c.deadLettered.Load(),
		WriteRetries: c.writeRetries.Load(), CommitErrors: c.commitErrors.Load(),
	}
}

// Run joins the consumer group and processes batches until ctx ends. On
// shutdown it stops fetching, finishes the batch in hand (one write
// attempt, then commit), leaves the group and returns nil. A batch it
// could not finish stays uncommitted and is redelivered to the group.
// Run may be called once.
func (p *Receiver) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("kafkareceiver: Processor.Run called twice")
	}
	r := kafka.NewReader(p.readerConfig())
	defer p.close(r)
	p.logger.Info("kafka processor starting", "topic", p.cfg.Topic, "group", p.cfg.Consumer.Group)
	for attempt := 0; ctx.Err() == nil; {
		batch, err := p.collect(ctx, r)
		if len(batch) > 0 && !p.handle(ctx, r, batch) {
			return nil
		}
		if err == nil || ctx.Err() != nil {
			attempt = 0
			continue
		}
		p.limited.Log(slog.LevelWarn, "fetch", "kafka fetch failed; retrying with backoff; if it repeats, check that the brokers in kafka_brokers are up and reachable", "topic", p.cfg.Topic, "err", err)
		if !p.pause(ctx, attempt) {
			return nil
		}
		attempt++
	}
	return nil
}

// collect blocks for one record, then gathers more for up to BatchLinger,
// stopping at MaxBatchOps records or once MaxBatchBytes is reached.
func (p *Receiver) collect(ctx context.Context, r *kafka.Reader) ([]kafka.Message, error) {
	first, err := r.FetchMessage(ctx)
	if err != nil {
		return nil, err
	}
	c := p.cfg.Consumer
	batch := []kafka.Message{first}
	size := int64(len(first.Key) + len(first.Value))
	lctx, cancel := context.WithTimeout(ctx, c.BatchLinger)
	defer cancel()
	for len(batch) < c.MaxBatchOps && size < c.MaxBatchBytes {
		// An error here is the linger ending or shutdown: either way the
		// batch in hand is written. FetchMessage keeps unread records.
		m, err := r.FetchMessage(lctx)
		if err != nil {
			break
		}
		batch = append(batch, m)
		size += int64(len(m.Key) + len(m.Value))
	}
	return batch, nil
}

func (p *Receiver) readerConfig() kafka.ReaderConfig {
	c := p.cfg.Consumer
	return kafka.ReaderConfig{
		Brokers: p.cfg.Brokers,
		GroupID: c.Group,
		Topic:   p.cfg.Topic,
		Dialer:  &kafka.Dialer{Timeout: p.cfg.DialTimeout, ClientID: p.cfg.ClientID, DualStack: true},
		// A new group starts at the oldest record: whatever ingest
		// acknowledged before the first processor joined is still owed.
		StartOffset: kafka.FirstOffset,
		// Zero means synchronous commits: CommitMessages returns once the
		// broker has stored the offsets.
		CommitInterval:        0,
		MinBytes:              1,
		MaxBytes:              c.FetchMaxBytes,
		MaxWait:               c.FetchMaxWait,
		QueueCapacity:         c.PrefetchRecords,
		HeartbeatInterval:     c.HeartbeatInterval,
		SessionTimeout:        c.SessionTimeout,
		RebalanceTimeout:      c.RebalanceTimeout,
		JoinGroupBackoff:      c.HeartbeatInterval,
		WatchPartitionChanges: true,
		ReadLagInterval:       -1,
		ErrorLogger:           p.limited.KafkaErrorLogger("consumer"),
	}
}

func (p *Receiver) close(r *kafka.Reader) {
	// Closing the reader leaves the group, so the partitions move to the
	// other members at once instead of after the session timeout.
	if err := r.Close(); err != nil {
		p.logger.Warn("closing the kafka reader failed; its partitions move to the other processors once the group's session times out", "err", err)
	}
	if err := kafkabase.CloseWriter(p.dlq); err != nil {
		p.logger.Info("closing the dead-letter writer failed; every dead letter was acknowledged before, so nothing is lost", "err", err)
	}
	p.logger.Info("kafka processor left", "topic", p.cfg.Topic, "group", p.cfg.Consumer.Group)
}

// OnFatal is told when the receiver stops by itself: the process cannot
// store calls without it. Set it before Start.
func (p *Receiver) OnFatal(fatal func(error)) { p.fatal = fatal }
