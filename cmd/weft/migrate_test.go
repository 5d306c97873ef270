package main

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/kafkatest"
)

// TestMigrateScaleOut runs weft migrate against Kafka and ClickHouse as a
// scale-out deployment does before starting its roles: it applies the
// ClickHouse migrations and creates the topics, and running it again
// changes nothing. With kafka.create_topics false it leaves Kafka alone.
func TestMigrateScaleOut(t *testing.T) {
	tests := []struct {
		name       string
		file       string // weft.yaml body
		wantTopics bool
	}{
		{"creates topics", "kafka:\n  partitions: 3\n", true},
		{"create_topics false", "kafka:\n  create_topics: false\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			brokers := strings.Join(kafkatest.Start(t).Addrs(), ",")
			dsn := clickhouseDSN(t)
			args := []string{"migrate", "--config", writeConfig(t, tc.file), "--kafka-brokers", brokers, "--clickhouse-dsn", dsn}
			for range 2 {
				out := mustRunWeft(t, nil, args...)
				if !strings.Contains(out, "ClickHouse schema up to date") {
					t.Fatalf("migrate printed %q", out)
				}
			}
			got := topicPartitions(t, brokers)
			want := map[string]int{}
			if tc.wantTopics {
				want = map[string]int{"weft.calls": 3, "weft.calls.dlq": 3, "weft.automation-events": 3, "weft.automation-events.dlq": 3,
					"weft.training-commands": 1}
			}
			if !maps.Equal(got, want) {
				t.Fatalf("topics %v; want %v", got, want)
			}
		})
	}
}

// topicPartitions lists the cluster's topics with their partition counts.
func topicPartitions(t *testing.T, brokers string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A fresh transport: a shared one caches metadata.
	client := &kafka.Client{Addr: kafka.TCP(strings.Split(brokers, ",")...), Transport: &kafka.Transport{}}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, topic := range md.Topics {
		out[topic.Name] = len(topic.Partitions)
	}
	return out
}
