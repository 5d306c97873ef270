package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestMigrateCreatesTopics runs `weft migrate --kafka-brokers ...
// --clickhouse-dsn ...` against the dev stack, as an operator does before
// starting the roles, and finds both topics with the configured partitions
// (the stack would auto-create others with its own count).
func TestMigrateCreatesTopics(t *testing.T) {
	brokers, ch := devstack(t)
	cfg := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(cfg, []byte("kafka:\n  partitions: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary(t), "migrate", "--config", cfg,
		"--kafka-brokers", brokers, "--clickhouse-dsn", ch+"/weft").CombinedOutput()
	if err != nil {
		t.Fatalf("weft migrate: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(strings.Split(brokers, ",")...), Transport: &kafka.Transport{}}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, topic := range md.Topics {
		got[topic.Name] = len(topic.Partitions)
	}
	if got["weft.calls"] != 4 || got["weft.calls.dlq"] != 4 {
		t.Fatalf("topics after migrate: %v; want weft.calls and weft.calls.dlq with 4 partitions\n%s", got, out)
	}
}
