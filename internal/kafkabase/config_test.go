package kafkabase

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	valid := DefaultConfig()
	valid.Brokers = []string{"kafka:9092"}
	tests := []struct {
		name   string
		modify func(*Config)
		want   string // substring of the error; "" = valid
	}{
		{"defaults with brokers", func(*Config) {}, ""},
		{"no brokers", func(c *Config) { c.Brokers = nil }, "kafka.brokers"},
		{"same topics", func(c *Config) { c.DeadLetterTopic = c.Topic }, "kafka.dead_letter_topic"},
		{"zero replication", func(c *Config) { c.ReplicationFactor = 0 }, "kafka.replication_factor"},
		{"unknown compression", func(c *Config) { c.Compression = "brotli" }, "kafka.compression"},
		{"no compression", func(c *Config) { c.Compression = "none" }, ""},
		{"tiny in-flight bytes", func(c *Config) { c.Producer.MaxInFlightBytes = 10 }, "kafka.producer.max_in_flight"},
		{"no group", func(c *Config) { c.Consumer.Group = "" }, "kafka.consumer.group"},
		{"fetch below message size", func(c *Config) { c.Consumer.FetchMaxBytes = 1000 }, "kafka.consumer.fetch_max_bytes"},
		{"session too short", func(c *Config) { c.Consumer.SessionTimeout = c.Consumer.HeartbeatInterval }, "kafka.consumer.session_timeout"},
		{"backoff inverted", func(c *Config) { c.Consumer.RetryBackoffMax = time.Millisecond }, "kafka.consumer.retry_backoff_min"},
		{"no prefetch", func(c *Config) { c.Consumer.PrefetchRecords = 0 }, "kafka.consumer.prefetch_records"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid
			tc.modify(&cfg)
			err := cfg.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
