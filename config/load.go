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
	target           any  // *string or *int64 inside a Config
	admin            bool // the admin commands (keys, migrate) take the flag too
}

func bindings(c *Config) []binding {
	return []binding{
		{"listen", "WEFT_LISTEN", "HTTP listen address", &c.Listen, false},
		{"otlp-grpc-listen", "WEFT_OTLP_GRPC_LISTEN", "OTLP/gRPC listen address (empty disables)", &c.OTLPGRPCListen, false},
		{"tls-cert-file", "WEFT_TLS_CERT_FILE", "PEM certificate: serve HTTP and OTLP/gRPC over TLS", &c.TLSCertFile, false},
		{"tls-key-file", "WEFT_TLS_KEY_FILE", "PEM private key of --tls-cert-file", &c.TLSKeyFile, false},
		{"data-dir", "WEFT_DATA_DIR", "data directory (database, keys)", &c.DataDir, true},
		{"max-request-bytes", "WEFT_MAX_REQUEST_BYTES", "largest accepted request body", &c.MaxRequestBytes, false},
		{"log-level", "WEFT_LOG_LEVEL", "debug, info, warn or error", &c.LogLevel, true},
		{"debug-listen", "WEFT_DEBUG_LISTEN", "pprof address (empty disables)", &c.DebugListen, false},
		{"metrics-listen", "WEFT_METRICS_LISTEN", "serve /metrics here instead of on the API listener", &c.MetricsListen, false},
		{"roles", "WEFT_ROLES", "comma-separated roles: ingest, process, query; or agent alone", &c.Roles, false},
		{"upstream", "WEFT_UPSTREAM", "agent: the central Weft's URL to forward to", &c.Agent.Upstream, false},
		{"agent-api-key", "WEFT_AGENT_API_KEY", "agent: API key for requests that carry none (prefer the env variable)", &c.Agent.APIKey, false},
		{"kafka-brokers", "WEFT_KAFKA_BROKERS", "Kafka bootstrap brokers, comma-separated (scale-out)", &c.KafkaBrokers, true},
		{"clickhouse-dsn", "WEFT_CLICKHOUSE_DSN", "ClickHouse DSN, clickhouse:// or http:// (scale-out)", &c.ClickHouseDSN, true},
	}
}

// Scope says which settings a command takes as flags.
type Scope int

const (
	// ServeFlags: every setting that has a flag.
	ServeFlags Scope = iota
	// AdminFlags: the settings that say where the store and Kafka are
	// (--data-dir, --clickhouse-dsn, --kafka-brokers) and --log-level, for
	// commands that prepare or change state and exit.
	AdminFlags
)

// Flags are the settings' flags on one command's flag set: --config and a
// flag per setting in its scope. Every command that reads the
// configuration registers them the same way, so they share flag names,
// environment variables (all of them, whatever the scope), the file and
// the precedence.
type Flags struct {
	fs         *flag.FlagSet
	getenv     func(string) string
	configPath *string
	values     map[string]*string
}

// RegisterFlags adds --config and the flags of the settings in scope to
// fs. Parse fs, then call Config.
func RegisterFlags(fs *flag.FlagSet, scope Scope, getenv func(string) string) *Flags {
	f := &Flags{fs: fs, getenv: getenv, values: map[string]*string{}}
	f.configPath = fs.String("config", getenv("WEFT_CONFIG"), "YAML config file (env WEFT_CONFIG)")
	for _, b := range bindings(&Config{}) {
		if scope == ServeFlags || b.admin {
			f.values[b.flag] = fs.String(b.flag, "", b.usage+" (env "+b.env+")")
		}
	}
	return f
}

// Load builds the configuration from args (flags after the subcommand) and
// the environment. The config file comes from --config or WEFT_CONFIG.
func Load(args []string, getenv func(string) string) (Config, error) {
	fs := flag.NewFlagSet("weft", flag.ContinueOnError)
	f := RegisterFlags(fs, ServeFlags, getenv)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return f.Config()
}

// Config builds the validated configuration once the flag set is parsed:
// defaults, then the file, then the environment, then the flags given.
func (f *Flags) Config() (Config, error) {
	cfg := Default()
	if *f.configPath != "" {
		if err := loadFile(*f.configPath, &cfg); err != nil {
			return Config{}, err
		}
	}
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, b := range bindings(&cfg) {
		if v := f.getenv(b.env); v != "" {
			if err := assign(b.target, v); err != nil {
				return Config{}, fmt.Errorf("env %s: %w", b.env, err)
			}
		}
		if set[b.flag] {
			if err := assign(b.target, *f.values[b.flag]); err != nil {
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
