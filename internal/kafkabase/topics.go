package kafkabase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// topicMetadataWait bounds how long EnsureTopics waits for a created
// topic to have a leader for every partition: real brokers create topics
// asynchronously and the first produce would fail meanwhile.
const topicMetadataWait = 30 * time.Second

// EnsureTopics creates the call topic and the dead-letter topic when they
// are missing, with cfg's partitions and replication factor. An existing
// topic is left as it is (its partition count is logged when it differs).
// Call it at start in every role when cfg.CreateTopics is set.
func EnsureTopics(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	transport := cfg.Transport()
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: cfg.RequestTimeout, Transport: transport}
	topicBytes := strconv.Itoa(cfg.MaxMessageBytes + DeadLetterOverhead)
	var topics []kafka.TopicConfig
	for _, name := range []string{cfg.Topic, cfg.DeadLetterTopic} {
		topics = append(topics, kafka.TopicConfig{
			Topic: name, NumPartitions: cfg.Partitions, ReplicationFactor: cfg.ReplicationFactor,
			ConfigEntries: []kafka.ConfigEntry{{ConfigName: "max.message.bytes", ConfigValue: topicBytes}},
		})
	}
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: topics})
	if err != nil {
		return fmt.Errorf("create kafka topics at %v: %w", cfg.Brokers, err)
	}
	for _, t := range topics {
		switch err := res.Errors[t.Topic]; {
		case err == nil:
			logger.Info("created kafka topic", "topic", t.Topic, "partitions", t.NumPartitions, "replication_factor", t.ReplicationFactor)
		case errors.Is(err, kafka.TopicAlreadyExists):
		default:
			return fmt.Errorf("create kafka topic %s: %w", t.Topic, err)
		}
	}
	return waitForTopics(ctx, client, []string{cfg.Topic, cfg.DeadLetterTopic}, cfg.Partitions, logger)
}

// EnsureTopic creates one topic with its own partition count when it is
// missing (a log that must keep one total order has one partition), and
// waits until every partition has a leader.
func EnsureTopic(ctx context.Context, cfg Config, name string, partitions int, logger *slog.Logger) error {
	transport := cfg.Transport()
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: cfg.RequestTimeout, Transport: transport}
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: name, NumPartitions: partitions, ReplicationFactor: cfg.ReplicationFactor,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "max.message.bytes", ConfigValue: strconv.Itoa(cfg.MaxMessageBytes)}},
	}}})
	if err != nil {
		return fmt.Errorf("create kafka topic %s at %v: %w", name, cfg.Brokers, err)
	}
	switch err := res.Errors[name]; {
	case err == nil:
		logger.Info("created kafka topic", "topic", name, "partitions", partitions)
	case !errors.Is(err, kafka.TopicAlreadyExists):
		return fmt.Errorf("create kafka topic %s: %w", name, err)
	}
	return waitForTopics(ctx, client, []string{name}, partitions, logger)
}

// waitForTopics polls metadata until every partition of the named topics
// has a leader.
func waitForTopics(ctx context.Context, client *kafka.Client, names []string, partitions int, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, topicMetadataWait)
	defer cancel()
	for {
		md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: names})
		if err == nil {
			if ready, parts := topicsReady(md, names); ready {
				if parts != partitions {
					logger.Info("kafka topic exists with another partition count; keeping it",
						"topic", names[0], "partitions", parts, "configured", partitions)
				}
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for kafka topics %v to have leaders: %w (last error: %v)", names, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// topicsReady reports whether every named topic exists with a leader on
// each partition, and the partition count of the first.
func topicsReady(md *kafka.MetadataResponse, names []string) (bool, int) {
	found := map[string]kafka.Topic{}
	for _, t := range md.Topics {
		found[t.Name] = t
	}
	for _, name := range names {
		t, ok := found[name]
		if !ok || t.Error != nil || len(t.Partitions) == 0 {
			return false, 0
		}
		for _, p := range t.Partitions {
			if p.Error != nil || p.Leader.Host == "" {
				return false, 0
			}
		}
	}
	return true, len(found[names[0]].Partitions)
}

// DeadLetterOverhead is room for the added headers on top of a record of
// max_message_bytes.
const DeadLetterOverhead = 4096
