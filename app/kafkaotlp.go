package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/receiver/kafkareceiver"
	"github.com/weftdev/weft/receiver/otelmap"
)

// newOTLPTopicReceiver is the process role's consumer of the OTLP topic
// (kafka_otlp.topic), feeding the same processor as the call topic; nil
// when no topic is configured.
func newOTLPTopicReceiver(ctx context.Context, cfg config.Config, front consumer.Calls, m *telemetry.Metrics, logger *slog.Logger) (*kafkareceiver.Receiver, error) {
	if !cfg.KafkaOTLP.Enabled() {
		return nil, nil
	}
	kcfg := cfg.KafkaOTLP.Kafka(cfg.Kafka)
	if kcfg.CreateTopics {
		if err := kafkabase.EnsureTopics(ctx, kcfg, logger); err != nil {
			return nil, fmt.Errorf("kafka_otlp topics: %w", err)
		}
	}
	mapper := otelmap.NewMapper(otelmap.Options{MaxAttributeValueBytes: cfg.OTLP.MaxAttributeValueBytes})
	set := settings(kafkareceiver.Type(), "otlp", m, logger)
	set.Logger = set.Logger.With("topic", kcfg.Topic)
	r, err := kafkareceiver.NewOTLPReceiver(set, cfg.Kafka, cfg.KafkaOTLP, mapper, front)
	if err != nil {
		return nil, fmt.Errorf("kafka_otlp receiver: %w", err)
	}
	return r, nil
}
