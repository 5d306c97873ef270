// Package config turns a YAML file, WEFT_* environment variables and
// command-line flags into one validated Config. Precedence: flag, then
// environment, then file, then default.
//
// It must never import anything but the packages whose settings it embeds.
package config

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/weftdev/weft/exporter/forwardexporter"
	"github.com/weftdev/weft/exporter/storageexporter"
	"github.com/weftdev/weft/inference"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/monitors"
	"github.com/weftdev/weft/processor/batchprocessor"
	"github.com/weftdev/weft/processor/tracemetricsprocessor"
	"github.com/weftdev/weft/receiver/kafkareceiver"
	"github.com/weftdev/weft/receiver/otlpreceiver"
	"github.com/weftdev/weft/traceapi"
	"github.com/weftdev/weft/training"
)

// Config is the whole server configuration. Every field has a YAML key;
// flags and environment variables exist for the common ones.
type Config struct {
	// Listen is the HTTP address of the API (Weave and OTLP/HTTP).
	Listen string `yaml:"listen"`
	// OTLPGRPCListen is the OTLP/gRPC address; empty disables it.
	OTLPGRPCListen string `yaml:"otlp_grpc_listen"`
	// TLSCertFile and TLSKeyFile, PEM files, put TLS on the HTTP and
	// OTLP/gRPC listeners. Both or neither; neither is plain text.
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`
	// DataDir holds the embedded database and the key file.
	DataDir string `yaml:"data_dir"`
	// MaxRequestBytes caps any request body (after decompression). 32 MiB.
	MaxRequestBytes int64 `yaml:"max_request_bytes"`
	// MaxFileBytes caps one file upload (/file/create). 1 GiB.
	MaxFileBytes int64 `yaml:"max_file_bytes"`
	// PricingFile replaces the shipped default LLM price table (same CSV
	// format as pricing/default_prices.csv). Empty: the shipped table.
	PricingFile string `yaml:"pricing_file"`
	// ShutdownTimeout bounds the flush on SIGTERM. 30s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// DebugListen serves Go's pprof profiles (/debug/pprof/) on this
	// address; empty (the default) disables it. Keep it on loopback.
	DebugListen string `yaml:"debug_listen"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// Pipeline bounds what the batch processor admits and shapes batches.
	Pipeline batchprocessor.Config `yaml:"pipeline"`
	// WAL is the storage exporter's write-ahead log on the embedded store.
	// Its dir defaults to <data_dir>/wal.
	WAL storageexporter.Config `yaml:"wal"`
	// DuckDBMemoryMB is the embedded store's buffer pool, in megabytes. 384.
	DuckDBMemoryMB int `yaml:"duckdb_memory_mb"`
	// DuckDBThreads is how many threads the embedded store runs queries
	// and checkpoints on. 0 (the default): half the CPUs, at least one.
	DuckDBThreads int `yaml:"duckdb_threads"`
	// MetricsListen serves Prometheus /metrics on its own address instead
	// of the API listener. Empty: /metrics on the API listener.
	MetricsListen string `yaml:"metrics_listen"`
	// OTLP holds the OTLP/HTTP and OTLP/gRPC decoding limits.
	OTLP otlpreceiver.Config `yaml:"otlp"`
	// Connections bounds client connections: timeouts and caps.
	Connections Connections `yaml:"connections"`
	// Queries bounds the calls, threads, feedback and cost queries the API
	// passes to the store: query document size, operands, $in lists,
	// nodes, strings, field paths and sort keys. Errors over a limit name
	// its key under "queries". Its budget keys bound the read API's store
	// reads as they run: time, and reads at once in all and per API key.
	Queries traceapi.Settings `yaml:"queries"`
	// Inference is the OpenAI-compatible gateway's providers and models.
	Inference inference.Config `yaml:"inference"`

	// Roles lists what this process runs: ingest, process, query
	// (comma-separated). Default all three, on the embedded store.
	Roles string `yaml:"roles"`
	// KafkaBrokers (host:port, comma-separated) puts Kafka between ingest
	// and process. Empty: the in-process queue.
	KafkaBrokers string `yaml:"kafka_brokers"`
	// ClickHouseDSN selects ClickHouse as the store (clickhouse://host:9000/db
	// or http://host:8123/db); keys live there too. Empty: DuckDB in data_dir.
	ClickHouseDSN string `yaml:"clickhouse_dsn"`
	// Retention keeps calls per project for a while (ClickHouse TTL).
	Retention Retention `yaml:"retention"`
	// MigrateOnStart applies ClickHouse migrations at start. Default true.
	MigrateOnStart bool `yaml:"migrate_on_start"`
	// Kafka holds topics, batching and consumer settings (brokers come
	// from kafka_brokers).
	Kafka kafkabase.Config `yaml:"kafka"`
	// Automations configures webhook deliveries and the secrets key.
	Automations Automations `yaml:"automations"`
	// UI serves the browser UI at / on the API listener. Default true.
	UI bool `yaml:"ui"`
	// KafkaOTLP is the process role's second topic: OTLP spans as the
	// OpenTelemetry Collector's Kafka exporter writes them.
	KafkaOTLP kafkareceiver.OTLPConfig `yaml:"kafka_otlp"`
	// Agent configures the agent role: its upstream and disk buffer.
	Agent forwardexporter.Config `yaml:"agent"`
	// Training configures the training service: trainable base models,
	// leases and the job queue.
	Training training.Config `yaml:"training"`
	// TraceMetrics counts stored calls into weft_app_* metrics (opt-in).
	TraceMetrics tracemetricsprocessor.Config `yaml:"trace_metrics"`
	// Monitors runs online scorers on stored calls.
	Monitors monitors.Config `yaml:"monitors"`
}

// Default returns the documented defaults.
func Default() Config {
	return Config{
		Listen:          "127.0.0.1:6345",
		OTLPGRPCListen:  "127.0.0.1:4317",
		DataDir:         "./weft-data",
		MaxRequestBytes: 32 << 20,
		MaxFileBytes:    1 << 30,
		ShutdownTimeout: 30 * time.Second,
		LogLevel:        "info",
		Pipeline:        batchprocessor.DefaultConfig(),
		WAL:             storageexporter.DefaultConfig(),
		DuckDBMemoryMB:  384,
		OTLP:            otlpreceiver.NewDefaultConfig(),
		Connections:     DefaultConnections(),
		Queries:         traceapi.DefaultSettings(),
		Inference:       inference.DefaultConfig(),
		Roles:           AllRoles,
		MigrateOnStart:  true,
		Kafka:           kafkabase.DefaultConfig(),
		Automations:     DefaultAutomations(),
		UI:              true,
		KafkaOTLP:       kafkareceiver.DefaultOTLPConfig(),
		Agent:           forwardexporter.DefaultConfig(),
		Training:        training.DefaultConfig(),
		TraceMetrics:    tracemetricsprocessor.DefaultConfig(),
		Monitors:        monitors.DefaultConfig(),
	}
}

// Validate reports every setting that cannot work, each with its full
// key path, as the Collector's Validate does.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("listen: %q is not host:port", c.Listen))
	}
	if c.OTLPGRPCListen != "" {
		if _, _, err := net.SplitHostPort(c.OTLPGRPCListen); err != nil {
			errs = append(errs, fmt.Errorf("otlp_grpc_listen: %q is not host:port", c.OTLPGRPCListen))
		}
	}
	errs = append(errs, c.validateTLS()...)
	if c.DataDir == "" {
		errs = append(errs, errors.New("data_dir: must not be empty"))
	}
	if c.MaxRequestBytes < 1024 {
		errs = append(errs, errors.New("max_request_bytes: must be at least 1024"))
	}
	if c.MaxFileBytes < 1 {
		errs = append(errs, errors.New("max_file_bytes: must be positive"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("shutdown_timeout: must be positive"))
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log_level: %q is not one of debug, info, warn, error", c.LogLevel))
	}
	if c.DuckDBMemoryMB < 64 {
		errs = append(errs, fmt.Errorf("duckdb_memory_mb: %d is below the 64 MB minimum", c.DuckDBMemoryMB))
	}
	if c.DuckDBThreads < 0 {
		errs = append(errs, fmt.Errorf("duckdb_threads: %d is negative; 0 means half the CPUs", c.DuckDBThreads))
	}
	// Each section reports all of its errors, each with its key path; a
	// valid section adds nil, which Join drops.
	errs = append(errs, c.WALConfig().Validate(), c.Pipeline.Validate(), c.OTLP.Validate())
	errs = append(errs, c.validateScaleOut()...)
	errs = append(errs, c.Retention.validate()...)
	errs = append(errs, c.Connections.validate()...)
	errs = append(errs, c.Queries.Validate()) // nil when valid: Join drops it
	errs = append(errs, c.Automations.validate()...)
	if err := c.Inference.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Training.Validate()) // nil when valid: Join drops it
	errs = append(errs, c.TraceMetrics.Validate())
	errs = append(errs, c.Monitors.Validate())
	return errors.Join(errs...)
}

// WALConfig is the write-ahead log as the storage exporter runs it: off on
// ClickHouse (durable on its own), and in <data_dir>/wal unless wal.dir
// says otherwise.
func (c Config) WALConfig() storageexporter.Config {
	w := c.WAL
	if c.ClickHouseDSN != "" {
		w.Enabled = false
	}
	if w.Dir == "" {
		w.Dir = filepath.Join(c.DataDir, "wal")
	}
	return w
}

// validateTLS wants both TLS files or neither; whether they hold a usable
// pair is checked when the server loads them.
func (c Config) validateTLS() []error {
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return []error{errors.New("tls_cert_file, tls_key_file: set both for TLS (make a development pair with 'weft certs'), or neither for plain HTTP")}
	}
	return nil
}
