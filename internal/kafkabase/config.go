package kafkabase

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// Config holds the Kafka settings of the ingest role (producer side) and
// the process role (consumer side). One block serves both so the topic
// names cannot drift apart between roles.
type Config struct {
	// Brokers are the bootstrap host:port addresses.
	Brokers []string `yaml:"brokers"`
	// ClientID names this process to the brokers. Default "weft".
	ClientID string `yaml:"client_id"`
	// Topic carries the call ops. Default "weft.calls".
	Topic string `yaml:"topic"`
	// DeadLetterTopic receives records that can never be written.
	// Default "weft.calls.dlq".
	DeadLetterTopic string `yaml:"dead_letter_topic"`

	// CreateTopics creates both topics at start when they are missing.
	// Default true.
	CreateTopics bool `yaml:"create_topics"`
	// Partitions of a created topic; the most processors that can share
	// the work. Default 12.
	Partitions int `yaml:"partitions"`
	// ReplicationFactor of a created topic; -1 (the default) takes the
	// broker's default.replication.factor.
	ReplicationFactor int `yaml:"replication_factor"`

	// MaxMessageBytes is the largest encoded op; a bigger op is refused
	// with 413. The topics are created with max.message.bytes above it.
	// Default 1000000 (the broker default).
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// Compression of produced batches: none, gzip, snappy, lz4 or zstd.
	// Default snappy.
	Compression string `yaml:"compression"`

	Producer ProducerConfig `yaml:"producer"`
	Consumer ConsumerConfig `yaml:"consumer"`

	// DialTimeout bounds connecting to a broker. Default 5s.
	DialTimeout time.Duration `yaml:"dial_timeout"`
	// RequestTimeout bounds one Kafka request (produce, commit, admin).
	// Default 10s.
	RequestTimeout time.Duration `yaml:"request_timeout"`
}

// ProducerConfig shapes the ingest side.
type ProducerConfig struct {
	// Linger is how long a partial batch waits for more records. Every
	// Submit waits for it, so keep it small. Default 2ms.
	Linger time.Duration `yaml:"linger"`
	// BatchSize is the most records in one produce request per partition.
	// Default 1000.
	BatchSize int `yaml:"batch_size"`
	// AckTimeout bounds one Submit; beyond it the client gets 503 and
	// retries. Default 10s.
	AckTimeout time.Duration `yaml:"ack_timeout"`
	// MaxInFlightOps bounds ops waiting for Kafka's acknowledgement;
	// beyond it Submit answers 429. Default 100000.
	MaxInFlightOps int `yaml:"max_in_flight_ops"`
	// MaxInFlightBytes bounds their encoded bytes. Default 256 MiB.
	MaxInFlightBytes int64 `yaml:"max_in_flight_bytes"`
}

// ConsumerConfig shapes the process side.
type ConsumerConfig struct {
	// Group is the consumer group every processor replica joins.
	// Default "weft-processor".
	Group string `yaml:"group"`
	// MaxBatchOps is the most records written in one storage transaction.
	// Default 5000.
	MaxBatchOps int `yaml:"max_batch_ops"`
	// MaxBatchBytes bounds the record bytes of one batch. Default 64 MiB.
	MaxBatchBytes int64 `yaml:"max_batch_bytes"`
	// BatchLinger is how long a batch waits to fill after its first
	// record. Default 50ms.
	BatchLinger time.Duration `yaml:"batch_linger"`
	// PrefetchRecords is how many fetched records wait while a batch is
	// written, so the next batch is ready when the write ends. Memory is
	// about prefetch_records times the average record size (at worst
	// times max_message_bytes). Default 5000.
	PrefetchRecords int `yaml:"prefetch_records"`
	// FetchMaxBytes is the most bytes one fetch returns; at least
	// max_message_bytes. Default 16 MiB.
	FetchMaxBytes int `yaml:"fetch_max_bytes"`
	// FetchMaxWait is how long the broker holds an empty fetch. Default 250ms.
	FetchMaxWait time.Duration `yaml:"fetch_max_wait"`
	// SessionTimeout: a processor silent this long loses its partitions.
	// Default 10s.
	SessionTimeout time.Duration `yaml:"session_timeout"`
	// HeartbeatInterval must be well under SessionTimeout. Default 1s.
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"`
	// RebalanceTimeout bounds a rebalance. Default 10s.
	RebalanceTimeout time.Duration `yaml:"rebalance_timeout"`
	// WriteTimeout bounds one storage write attempt. Default 2m.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// RetryBackoffMin and RetryBackoffMax bound the pause between retries
	// while storage or Kafka is unavailable. Defaults 100ms and 10s.
	RetryBackoffMin time.Duration `yaml:"retry_backoff_min"`
	RetryBackoffMax time.Duration `yaml:"retry_backoff_max"`
}

// DefaultConfig returns the documented defaults; Brokers stays empty.
func DefaultConfig() Config {
	return Config{
		ClientID: "weft", Topic: "weft.calls", DeadLetterTopic: "weft.calls.dlq",
		CreateTopics: true, Partitions: 12, ReplicationFactor: -1,
		MaxMessageBytes: 1_000_000, Compression: "snappy",
		Producer: ProducerConfig{
			Linger: 2 * time.Millisecond, BatchSize: 1000, AckTimeout: 10 * time.Second,
			MaxInFlightOps: 100_000, MaxInFlightBytes: 256 << 20,
		},
		Consumer: ConsumerConfig{
			Group: "weft-processor", MaxBatchOps: 5000, MaxBatchBytes: 64 << 20,
			BatchLinger: 50 * time.Millisecond, PrefetchRecords: 5000, FetchMaxBytes: 16 << 20, FetchMaxWait: 250 * time.Millisecond,
			SessionTimeout: 10 * time.Second, HeartbeatInterval: time.Second, RebalanceTimeout: 10 * time.Second,
			WriteTimeout: 2 * time.Minute, RetryBackoffMin: 100 * time.Millisecond, RetryBackoffMax: 10 * time.Second,
		},
		DialTimeout: 5 * time.Second, RequestTimeout: 10 * time.Second,
	}
}

// Validate reports every setting that cannot work, naming its key.
func (c Config) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf("kafka."+format, args...))
		}
	}
	check(len(c.Brokers) == 0, "brokers: at least one host:port is required")
	check(c.Topic == "", "topic: must not be empty")
	check(c.DeadLetterTopic == "" || c.DeadLetterTopic == c.Topic, "dead_letter_topic: must be set and differ from topic")
	check(c.Partitions < 1, "partitions: must be at least 1")
	check(c.ReplicationFactor == 0 || c.ReplicationFactor < -1, "replication_factor: must be -1 (broker default) or at least 1")
	check(c.MaxMessageBytes < 1024, "max_message_bytes: must be at least 1024")
	_, err := CompressionCodec(c.Compression)
	check(err != nil, "compression: %v", err)
	check(c.DialTimeout <= 0 || c.RequestTimeout <= 0, "dial_timeout and request_timeout: must be positive")
	p := c.Producer
	check(p.Linger < 0, "producer.linger: must not be negative")
	check(p.BatchSize < 1, "producer.batch_size: must be at least 1")
	check(p.AckTimeout <= 0, "producer.ack_timeout: must be positive")
	check(p.MaxInFlightOps < 1 || p.MaxInFlightBytes < int64(c.MaxMessageBytes),
		"producer.max_in_flight_ops must be at least 1 and producer.max_in_flight_bytes at least max_message_bytes")
	errs = append(errs, c.Consumer.validate(c.MaxMessageBytes)...)
	return errors.Join(errs...)
}

func (c ConsumerConfig) validate(maxMessage int) []error {
	var errs []error
	check := func(bad bool, msg string) {
		if bad {
			errs = append(errs, errors.New("kafka.consumer."+msg))
		}
	}
	check(c.Group == "", "group: must not be empty")
	check(c.MaxBatchOps < 1, "max_batch_ops: must be at least 1")
	check(c.MaxBatchBytes < int64(maxMessage), "max_batch_bytes: must be at least max_message_bytes")
	check(c.BatchLinger < 0, "batch_linger: must not be negative")
	check(c.PrefetchRecords < 1, "prefetch_records: must be at least 1")
	check(c.FetchMaxBytes < maxMessage, "fetch_max_bytes: must be at least max_message_bytes")
	check(c.FetchMaxWait <= 0, "fetch_max_wait: must be positive")
	check(c.HeartbeatInterval <= 0 || c.SessionTimeout < 2*c.HeartbeatInterval,
		"session_timeout: must be at least twice heartbeat_interval (both positive)")
	check(c.RebalanceTimeout <= 0, "rebalance_timeout: must be positive")
	check(c.WriteTimeout <= 0, "write_timeout: must be positive")
	check(c.RetryBackoffMin <= 0 || c.RetryBackoffMax < c.RetryBackoffMin,
		"retry_backoff_min: must be positive and at most retry_backoff_max")
	return errs
}

func CompressionCodec(name string) (kafka.Compression, error) {
	switch strings.ToLower(name) {
	case "", "none":
		return 0, nil
	case "gzip":
		return kafka.Gzip, nil
	case "snappy":
		return kafka.Snappy, nil
	case "lz4":
		return kafka.Lz4, nil
	case "zstd":
		return kafka.Zstd, nil
	}
	return 0, fmt.Errorf("%q is not one of none, gzip, snappy, lz4, zstd", name)
}

func (c Config) Transport() *kafka.Transport {
	return &kafka.Transport{DialTimeout: c.DialTimeout, ClientID: c.ClientID}
}

// closeWriter closes w and its connections: kafka-go closes the idle
// connections only of a transport it created itself.
func CloseWriter(w *kafka.Writer) error {
	err := w.Close()
	if t, ok := w.Transport.(*kafka.Transport); ok {
		t.CloseIdleConnections()
	}
	return err
}
