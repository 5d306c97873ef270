// Package kafkatest runs an in-process Kafka cluster (franz-go's kfake) on
// loopback for tests and the local dev stack. kfake speaks the real Kafka
// protocol, so production clients (segmentio/kafka-go) run against it as they
// would against brokers.
//
// It owns only the cluster's lifecycle and addresses. It must never import
// other weft packages, and production code must never import it.
package kafkatest

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Cluster is a running fake Kafka cluster.
type Cluster struct {
	c     *kfake.Cluster
	addrs []string
}

type config struct {
	brokers   int
	ports     []int
	topics    map[string]int32
	autoTopic bool
	dataDir   string
	logger    *slog.Logger
}

// Option configures a Cluster.
type Option func(*config)

// WithBrokers sets the number of brokers (default 1).
func WithBrokers(n int) Option { return func(c *config) { c.brokers = n } }

// WithPorts fixes the brokers' loopback ports, one broker per port.
func WithPorts(ports ...int) Option { return func(c *config) { c.ports = ports } }

// WithTopic creates a topic at start. kfake does not create topics on demand
// unless WithAutoCreateTopics is given (and the client asks for it too, e.g.
// kafka.Writer.AllowAutoTopicCreation).
func WithTopic(name string, partitions int32) Option {
	return func(c *config) { c.topics[name] = partitions }
}

// WithAutoCreateTopics lets metadata requests create unknown topics.
func WithAutoCreateTopics() Option { return func(c *config) { c.autoTopic = true } }

// WithDataDir persists the cluster's log and offsets in dir across restarts.
func WithDataDir(dir string) Option { return func(c *config) { c.dataDir = dir } }

// WithLogger sends kfake's warnings and errors to l.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// New starts a cluster on 127.0.0.1. The caller must Close it.
func New(opts ...Option) (*Cluster, error) {
	cfg := config{brokers: 1, topics: map[string]int32{}}
	for _, o := range opts {
		o(&cfg)
	}
	kopts := []kfake.Opt{
		kfake.NumBrokers(cfg.brokers),
		// Short session timeouts keep consumer-group tests fast; the
		// default minimum of 6 s would reject them.
		kfake.GroupMinSessionTimeout(100 * time.Millisecond),
	}
	if len(cfg.ports) > 0 {
		kopts = append(kopts, kfake.Ports(cfg.ports...))
	}
	for name, parts := range cfg.topics {
		kopts = append(kopts, kfake.SeedTopics(parts, name))
	}
	if cfg.autoTopic {
		kopts = append(kopts, kfake.AllowAutoTopicCreation())
	}
	if cfg.dataDir != "" {
		kopts = append(kopts, kfake.DataDir(cfg.dataDir))
	}
	if cfg.logger != nil {
		kopts = append(kopts, kfake.WithLogger(slogLogger{cfg.logger}))
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafkatest: start cluster: %w", err)
	}
	return &Cluster{c: c, addrs: c.ListenAddrs()}, nil
}

// Start starts a cluster for one test and closes it when the test ends.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Addrs returns the brokers' host:port addresses.
func (c *Cluster) Addrs() []string { return append([]string(nil), c.addrs...) }

// Close stops the cluster. It is safe to call more than once.
func (c *Cluster) Close() { c.c.Close() }

// slogLogger adapts slog to kfake's logger, passing on warnings and errors:
// kfake logs every request at info level, which would drown test output.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Logf(level kfake.LogLevel, msg string, args ...any) {
	var lvl slog.Level
	switch level {
	case kfake.LogLevelError:
		lvl = slog.LevelError
	case kfake.LogLevelWarn:
		lvl = slog.LevelWarn
	default:
		return
	}
	s.l.Log(context.Background(), lvl, fmt.Sprintf(msg, args...), "component", "kfake")
}
