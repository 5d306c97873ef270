package kafkabase_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/kafkatest"
)

func TestEnsureTopics(t *testing.T) {
	tests := []struct {
		name        string
		replication int
		existing    int // partitions of a call topic created beforehand; 0 = none
		want        int
	}{
		{"creates with explicit replication", 1, 0, 6},
		{"creates with broker default replication", -1, 0, 6},
		{"keeps an existing topic", 1, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := kafkatest.Start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cfg := kafkatest.Config(c.Addrs(), "topics")
			cfg.Partitions, cfg.ReplicationFactor = 6, tc.replication
			// Fresh transports: a transport caches metadata and would not
			// see topics another client created.
			client := &kafka.Client{Addr: kafka.TCP(c.Addrs()...), Transport: &kafka.Transport{}}
			if tc.existing > 0 {
				if _, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
					{Topic: cfg.Topic, NumPartitions: tc.existing, ReplicationFactor: 1}}}); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 { // the second run finds both topics in place
				if err := kafkabase.EnsureTopics(ctx, cfg, slog.New(slog.DiscardHandler)); err != nil {
					t.Fatal(err)
				}
			}
			client = &kafka.Client{Addr: kafka.TCP(c.Addrs()...), Transport: &kafka.Transport{}}
			md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{cfg.Topic, cfg.DeadLetterTopic}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, topic := range md.Topics {
				got[topic.Name] = len(topic.Partitions)
			}
			if got[cfg.Topic] != tc.want || got[cfg.DeadLetterTopic] != 6 {
				t.Fatalf("partitions %v; want %d for %s and 6 for %s", got, tc.want, cfg.Topic, cfg.DeadLetterTopic)
			}
		})
	}
}

func TestEnsureTopicsFailsWithoutKafka(t *testing.T) {
	cfg := kafkatest.Config([]string{kafkatest.DeadAddr(t)}, "nowhere")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := kafkabase.EnsureTopics(ctx, cfg, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("EnsureTopics succeeded against a closed port")
	}
}
