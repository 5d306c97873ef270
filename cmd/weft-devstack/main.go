// Command weft-devstack runs weft's local dev stack on loopback: a Kafka
// cluster (franz-go's kfake) and ClickHouse (the embedded libchdb engine behind
// its HTTP front end). It prints
//
//	KAFKA=host:port[,host:port...]
//	CLICKHOUSE=http://host:port
//
// on stdout once both accept connections, logs to stderr, and runs until
// SIGTERM or SIGINT, then shuts both down and exits 0. It needs libchdb: run
// scripts/install-libchdb.sh first (or set WEFT_LIBCHDB).
//
// It is development tooling: nothing in weft's production code imports it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/weftdev/weft/internal/chfront"
	"github.com/weftdev/weft/internal/kafkatest"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	dir        string
	chAddr     string
	kafkaPort  int
	brokers    int
	topics     []topic
	autoCreate bool
}

type topic struct {
	name       string
	partitions int32
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "weft-devstack:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve(ctx, opts, stdout, log); err != nil {
		log.Error("dev stack failed; it stopped; fix what the error names and run weft-devstack again", "error", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var topics string
	fs := flag.NewFlagSet("weft-devstack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.dir, "dir", "", "data directory (required): ClickHouse data in DIR/clickhouse, Kafka log in DIR/kafka")
	fs.StringVar(&o.chAddr, "clickhouse-addr", "127.0.0.1:0", "ClickHouse HTTP listen address")
	fs.IntVar(&o.kafkaPort, "kafka-port", 0, "port of the first Kafka broker, the others follow; 0 picks random ports")
	fs.IntVar(&o.brokers, "kafka-brokers", 1, "number of Kafka brokers")
	fs.StringVar(&topics, "topics", "", "topics to create, comma-separated NAME[:PARTITIONS] (default 10 partitions)")
	fs.BoolVar(&o.autoCreate, "kafka-auto-create-topics", true, "create unknown topics when a client asks for them")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.dir == "" {
		return o, errors.New("--dir is required")
	}
	if o.brokers < 1 {
		return o, errors.New("--kafka-brokers must be at least 1")
	}
	var err error
	o.topics, err = parseTopics(topics)
	return o, err
}

func parseTopics(s string) ([]topic, error) {
	var out []topic
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, parts, found := strings.Cut(item, ":")
		t := topic{name: name, partitions: -1}
		if found {
			n, err := strconv.ParseInt(parts, 10, 32)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("--topics: bad partition count in %q", item)
			}
			t.partitions = int32(n)
		}
		out = append(out, t)
	}
	return out, nil
}

func serve(ctx context.Context, o options, stdout io.Writer, log *slog.Logger) error {
	kafka, err := kafkatest.New(kafkaOptions(o, log)...)
	if err != nil {
		return err
	}
	defer kafka.Close()
	ch, err := chfront.StartConfig(ctx, chfront.Config{
		Dir: filepath.Join(o.dir, "clickhouse"), Addr: o.chAddr, Logger: log,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "KAFKA=%s\nCLICKHOUSE=%s\n", strings.Join(kafka.Addrs(), ","), ch.URL())
	<-ctx.Done()
	log.Info("shutting down")
	if err := ch.Close(); err != nil {
		return err
	}
	kafka.Close()
	log.Info("stopped")
	return nil
}

func kafkaOptions(o options, log *slog.Logger) []kafkatest.Option {
	opts := []kafkatest.Option{
		kafkatest.WithBrokers(o.brokers),
		kafkatest.WithDataDir(filepath.Join(o.dir, "kafka")),
		kafkatest.WithLogger(log),
	}
	if o.kafkaPort > 0 {
		ports := make([]int, o.brokers)
		for i := range ports {
			ports[i] = o.kafkaPort + i
		}
		opts = append(opts, kafkatest.WithPorts(ports...))
	}
	for _, t := range o.topics {
		opts = append(opts, kafkatest.WithTopic(t.name, t.partitions))
	}
	if o.autoCreate {
		opts = append(opts, kafkatest.WithAutoCreateTopics())
	}
	return opts
}
