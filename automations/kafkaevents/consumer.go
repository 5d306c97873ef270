package kafkaevents

import (
	"context"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/storage"
)

// Dispatcher turns events into deliveries (automations.Dispatcher).
type Dispatcher interface {
	Deliveries(ctx context.Context, events []storage.ArtifactEvent) ([]storage.Delivery, error)
}

// DeliveryAdder stores deliveries, skipping ids already stored.
type DeliveryAdder interface {
	AddDeliveries(ctx context.Context, ds []storage.Delivery) error
}

// Consumer is the process role's reader of the events topic.
type Consumer struct {
	// Loop runs Run between Start and Shutdown: it is a component of
	// the process.
	*lifecycle.Loop
	cfg     kafkabase.Config
	topic   string
	group   string
	disp    Dispatcher
	store   DeliveryAdder
	wake    func()
	logger  *kafkabase.LimitedLogger
	letters *kafka.Writer
}

// NewConsumer reads topic in the consumer group group; records that are
// not events go to topic+".dlq".
func NewConsumer(cfg kafkabase.Config, topic, group string, disp Dispatcher, store DeliveryAdder, wake func(), logger *slog.Logger) *Consumer {
	limited := kafkabase.NewLimitedLogger(logger)
	letters := &kafka.Writer{Addr: kafka.TCP(cfg.Brokers...), Topic: DeadLetterTopic(topic), RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, Transport: cfg.Transport(), ErrorLogger: limited.KafkaErrorLogger("automation events dlq")}
	c := &Consumer{cfg: cfg, topic: topic, group: group, disp: disp, store: store, wake: wake, logger: limited, letters: letters}
	c.Loop = lifecycle.NewLoop("automation events consumer", logger, c.Run)
	return c
}

// DeadLetterTopic is where records that are no event go.
func DeadLetterTopic(topic string) string { return topic + ".dlq" }

// EnsureTopic creates the events topic and its dead-letter topic when
// they are missing, with the partitions and replication of the calls
// topic.
func EnsureTopic(ctx context.Context, cfg kafkabase.Config, topic string, logger *slog.Logger) error {
	cfg.Topic, cfg.DeadLetterTopic = topic, DeadLetterTopic(topic)
	return kafkabase.EnsureTopics(ctx, cfg, logger)
}

// Run consumes until ctx ends. An event's offset is committed only after
// its deliveries are stored, so a crash redelivers the event and the
// store keeps its deliveries once (their ids derive from the event).
func (c *Consumer) Run(ctx context.Context) error {
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: c.cfg.Brokers, GroupID: c.group, Topic: c.topic,
		Dialer:      &kafka.Dialer{Timeout: c.cfg.DialTimeout, ClientID: c.cfg.ClientID, DualStack: true},
		StartOffset: kafka.FirstOffset, CommitInterval: 0, MaxWait: c.cfg.Consumer.FetchMaxWait,
		QueueCapacity: 100, HeartbeatInterval: c.cfg.Consumer.HeartbeatInterval, SessionTimeout: c.cfg.Consumer.SessionTimeout,
		RebalanceTimeout: c.cfg.Consumer.RebalanceTimeout, JoinGroupBackoff: c.cfg.Consumer.HeartbeatInterval,
		ReadLagInterval: -1, ErrorLogger: c.logger.KafkaErrorLogger("automation events consumer")})
	defer func() { _ = r.Close(); _ = kafkabase.CloseWriter(c.letters) }()
	for {
		msg, err := r.FetchMessage(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			c.logger.Log(slog.LevelWarn, "fetch", "automation events: reading from Kafka failed; retrying at once; if it repeats, check that the brokers in kafka_brokers are up and reachable", "err", err)
			continue
		}
		if !c.handle(ctx, msg) {
			return nil
		}
		if err := r.CommitMessages(ctx, msg); err != nil && ctx.Err() == nil {
			c.logger.Log(slog.LevelWarn, "commit", "automation events: committing the offset failed; after a restart or rebalance the event is read again (its deliveries are stored once); if it repeats, check that the brokers in kafka_brokers are up", "err", err)
		}
	}
}

// handle stores one record's deliveries, retrying until it can or ctx
// ends (false). A record that is no event is set aside in the
// dead-letter topic.
func (c *Consumer) handle(ctx context.Context, msg kafka.Message) bool {
	pause := c.cfg.Consumer.RetryBackoffMin
	for {
		err := c.dispatch(ctx, msg)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		c.logger.Log(slog.LevelWarn, "dispatch", "automation events: an event's deliveries could not be stored (or the record set aside); it stays in Kafka and is retried after retry_in; if it repeats, check the store and kafka_brokers", "err", err, "retry_in", pause)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pause):
		}
		pause = min(2*pause, c.cfg.Consumer.RetryBackoffMax)
	}
}

func (c *Consumer) dispatch(ctx context.Context, msg kafka.Message) error {
	e, err := Decode(msg.Value)
	if err != nil {
		c.logger.Log(slog.LevelError, "bad record", "automation events: a record is no automation event; it is moved to the <automations.events_topic>.dlq topic and skipped; inspect it there",
			"partition", msg.Partition, "offset", msg.Offset, "err", err)
		return c.letters.WriteMessages(ctx, kafka.Message{Key: msg.Key, Value: msg.Value,
			Headers: []kafka.Header{{Key: "weft-dlq-reason", Value: []byte(err.Error())}}})
	}
	ds, err := c.disp.Deliveries(ctx, []storage.ArtifactEvent{e})
	if err == nil {
		err = c.store.AddDeliveries(ctx, ds)
	}
	if err == nil && len(ds) > 0 {
		c.wake()
	}
	return err
}
