package kafkabase

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestKafkaErrorLoggerLevels pins which kafka-go errors warn: a fetch that
// ran into its read deadline is normal operation (DEBUG); anything else
// warns and says what to check. The formats are kafka-go's own.
func TestKafkaErrorLoggerLevels(t *testing.T) {
	tests := []struct {
		name   string
		format string
		args   []any
		level  string
	}{
		{"fetch deadline", "the kafka reader got an unknown error reading partition %d of %s at offset %d: %s",
			[]any{0, "weft.calls", 1200, "read tcp 127.0.0.1:50154->127.0.0.1:43917: i/o timeout"}, "level=DEBUG"},
		{"broker refused", "the kafka reader got an unknown error reading partition %d of %s at offset %d: %s",
			[]any{0, "weft.calls", 1200, "dial tcp 127.0.0.1:9092: connect: connection refused"}, "level=WARN"},
		{"dial timeout", "failed to dial: %v", []any{"dial tcp 10.0.0.1:9092: i/o timeout"}, "level=WARN"},
		{"commit failed", "failed to commit offsets: %v", []any{"i/o timeout"}, "level=WARN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := NewLimitedLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
			l.KafkaErrorLogger("consumer").Printf(tt.format, tt.args...)
			out := buf.String()
			if !strings.Contains(out, tt.level) {
				t.Fatalf("logged %q, want %s", out, tt.level)
			}
			if tt.level == "level=WARN" && !strings.Contains(out, "kafka_brokers") {
				t.Fatalf("warning %q does not say what to check", out)
			}
		})
	}
}
