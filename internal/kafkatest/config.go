package kafkatest

import (
	"net"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/kafkabase"
)

// Partitions is the partition count of the topics Config describes.
const Partitions = 4

// Config is Weft's Kafka settings tuned for a fast local cluster: frequent
// heartbeats (so members notice a rebalance at once), small batches (so a
// run spans many batches), quick backoff. The session and rebalance
// timeouts stay long: on a loaded CI machine a heartbeat can be late by a
// second, and a member dropped for it causes a rebalance no test asked for.
func Config(brokers []string, name string) kafkabase.Config {
	cfg := kafkabase.DefaultConfig()
	cfg.Brokers = brokers
	cfg.Topic, cfg.DeadLetterTopic = name, name+".dlq"
	cfg.Partitions, cfg.ReplicationFactor = Partitions, 1
	cfg.DialTimeout, cfg.RequestTimeout = time.Second, 5*time.Second
	cfg.Producer.AckTimeout = 5 * time.Second
	c := &cfg.Consumer
	c.Group = name + "-group"
	c.MaxBatchOps, c.BatchLinger = 100, 20*time.Millisecond
	c.FetchMaxWait = 100 * time.Millisecond
	c.HeartbeatInterval, c.SessionTimeout, c.RebalanceTimeout = 100*time.Millisecond, 10*time.Second, 10*time.Second
	c.RetryBackoffMin, c.RetryBackoffMax = 10*time.Millisecond, 100*time.Millisecond
	return cfg
}

// DeadAddr returns a loopback address nothing listens on.
func DeadAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
