package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// binding ties one setting to its flag and environment variable.
type binding struct {
	flag, env, usage string
	target           any // *string or *int64 inside a Config
}

func bindings(c *Config) []binding {
	return []binding{
		{"listen", "WEFT_LISTEN", "HTTP listen address", &c.Listen},
		{"otlp-grpc-listen", "WEFT_OTLP_GRPC_LISTEN", "OTLP/gRPC listen address (empty disables)", &c.OTLPGRPCListen},
		{"data-dir", "WEFT_DATA_DIR", "data directory (database, keys)", &c.DataDir},
		{"max-request-bytes", "WEFT_MAX_REQUEST_BYTES", "largest accepted request body", &c.MaxRequestBytes},
		{"log-level", "WEFT_LOG_LEVEL", "debug, info, warn or error", &c.LogLevel},
		{"debug-listen", "WEFT_DEBUG_LISTEN", "pprof address (empty disables)", &c.DebugListen},
		{"metrics-listen", "WEFT_METRICS_LISTEN", "serve /metrics here instead of on the API listener", &c.MetricsListen},
		{"roles", "WEFT_ROLES", "comma-separated roles: ingest, process, query", &c.Roles},
		{"kafka-brokers", "WEFT_KAFKA_BROKERS", "Kafka bootstrap brokers, comma-separated (scale-out)", &c.KafkaBrokers},
		{"clickhouse-dsn", "WEFT_CLICKHOUSE_DSN", "ClickHouse DSN, clickhouse:// or http:// (scale-out)", &c.ClickHouseDSN},
	}
}

// Load builds the configuration from args (flags after the subcommand) and
// the environment. The config file comes from --config or WEFT_CONFIG.
func Load(args []string, getenv func(string) string) (Config, error) {
	cfg := Default()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	configPath := fs.String("config", getenv("WEFT_CONFIG"), "YAML config file (env WEFT_CONFIG)")
	flagVals := map[string]*string{}
	for _, b := range bindings(&cfg) {
		flagVals[b.flag] = fs.String(b.flag, "", b.usage+" (env "+b.env+")")
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *configPath != "" {
		if err := loadFile(*configPath, &cfg); err != nil {
			return Config{}, err
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, b := range bindings(&cfg) {
		if v := getenv(b.env); v != "" {
			if err := assign(b.target, v); err != nil {
				return Config{}, fmt.Errorf("env %s: %w", b.env, err)
			}
		}
		if set[b.flag] {
			if err := assign(b.target, *flagVals[b.flag]); err != nil {
				return Config{}, fmt.Errorf("flag --%s: %w", b.flag, err)
			}
		}
	}
	if cfg.KafkaBrokers == "" { // kafka.brokers in the file is the same setting
		cfg.KafkaBrokers = strings.Join(cfg.Kafka.Brokers, ",")
	}
	cfg.Kafka.Brokers = cfg.BrokerList()
	return cfg, cfg.Validate()
}

func assign(target any, v string) error {
	switch t := target.(type) {
	case *string:
		*t = v
	case *int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		*t = n
	default:
		panic(fmt.Sprintf("BUG: unsupported binding type %T", target))
	}
	return nil
}

var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found`)

// loadFile decodes the YAML file strictly: an unknown key is an error that
// names it, so typos never silently fall back to defaults.
func loadFile(path string, cfg *Config) error {
	body, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("config file %s: unknown key %q at line %s", path, m[2], m[1])
		}
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}
