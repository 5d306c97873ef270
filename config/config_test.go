package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileArgs replaces each "FILE:body" argument with the path of a file
// holding body.
func fileArgs(t *testing.T, args []string) []string {
	t.Helper()
	out := append([]string(nil), args...)
	for i, a := range out {
		if body, ok := strings.CutPrefix(a, "FILE:"); ok {
			out[i] = writeFile(t, body)
		}
	}
	return out
}

func TestLoadPrecedence(t *testing.T) {
	file := writeFile(t, "listen: 127.0.0.1:1000\ndata_dir: /from/file\nlog_level: warn\npipeline:\n  max_batch_ops: 7\n  batch_linger: 3ms\n")
	cfg, err := Load([]string{"--config", file, "--listen", "127.0.0.1:3000"},
		env(map[string]string{"WEFT_LISTEN": "127.0.0.1:2000", "WEFT_DATA_DIR": "/from/env"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:3000" || cfg.DataDir != "/from/env" || cfg.LogLevel != "warn" {
		t.Fatalf("precedence wrong: %+v", cfg)
	}
	if cfg.Pipeline.MaxBatchOps != 7 || cfg.Pipeline.BatchLinger != 3*time.Millisecond || cfg.Pipeline.MaxQueuedOps != defaultQueueOps() {
		t.Fatalf("nested keys wrong: %+v", cfg.Pipeline)
	}
}

// TestLoadTLS checks the TLS settings' flag, environment and file names.
func TestLoadTLS(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		cert, key string
	}{
		{"off by default", nil, nil, "", ""},
		{"flags", []string{"--tls-cert-file", "/f/c.pem", "--tls-key-file", "/f/k.pem"}, nil, "/f/c.pem", "/f/k.pem"},
		{"env", nil, map[string]string{"WEFT_TLS_CERT_FILE": "/e/c.pem", "WEFT_TLS_KEY_FILE": "/e/k.pem"}, "/e/c.pem", "/e/k.pem"},
		{"file, flag wins for the cert", []string{"--config", "FILE:tls_cert_file: /y/c.pem\ntls_key_file: /y/k.pem\n", "--tls-cert-file", "/f/c.pem"},
			nil, "/f/c.pem", "/y/k.pem"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := fileArgs(t, tc.args)
			cfg, err := Load(args, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.TLSCertFile != tc.cert || cfg.TLSKeyFile != tc.key {
				t.Fatalf("cert %q key %q; want %q %q", cfg.TLSCertFile, cfg.TLSKeyFile, tc.cert, tc.key)
			}
		})
	}
}

// fileArgs copies args, writing each "FILE:<yaml>" argument to a config
// file and passing its path instead.
func defaultQueueOps() int { return Default().Pipeline.MaxQueuedOps }

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantSub string
	}{
		{"unknown key", []string{"--config", "FILE:listen: 127.0.0.1:1\nlisten_addr: x\n"}, nil, `unknown key "listen_addr" at line 2`},
		{"unknown nested key", []string{"--config", "FILE:pipeline:\n  max_batch: 3\n"}, nil, `unknown key "max_batch"`},
		{"bad listen", []string{"--listen", "nope"}, nil, "listen:"},
		{"bad int env", nil, map[string]string{"WEFT_MAX_REQUEST_BYTES": "lots"}, "WEFT_MAX_REQUEST_BYTES"},
		{"bad level", []string{"--log-level", "loud"}, nil, "log_level"},
		{"config from env", nil, map[string]string{"WEFT_CONFIG": "FILE:bogus: 1\n"}, `unknown key "bogus"`},
		{"stray argument", []string{"extra"}, nil, "unexpected argument"},
		{"tiny duckdb pool", []string{"--config", "FILE:duckdb_memory_mb: 10\n"}, nil, "duckdb_memory_mb: 10 is below"},
		{"negative duckdb threads", []string{"--config", "FILE:duckdb_threads: -2\n"}, nil, "duckdb_threads: -2 is negative"},
		{"wal without room", []string{"--config", "FILE:wal:\n  max_unapplied_bytes: 10\n"}, nil, "wal.max_unapplied_bytes"},
		{"tls cert without key", []string{"--tls-cert-file", "/c.pem"}, nil, "tls_cert_file, tls_key_file: set both"},
		{"tls key without cert", nil, map[string]string{"WEFT_TLS_KEY_FILE": "/k.pem"}, "weft certs"},
		{"tls key in file only", []string{"--config", "FILE:tls_key_file: /k.pem\n"}, nil, "tls_cert_file, tls_key_file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := fileArgs(t, tc.args)
			e := map[string]string{}
			for k, v := range tc.env {
				if body, ok := strings.CutPrefix(v, "FILE:"); ok {
					v = writeFile(t, body)
				}
				e[k] = v
			}
			_, err := Load(args, env(e))
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantSub)
			}
		})
	}
}

func TestDefaultsValid(t *testing.T) {
	cfg, err := Load(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:6345" || cfg.DataDir != "./weft-data" || cfg.MaxRequestBytes != 32<<20 {
		t.Fatalf("defaults = %+v", cfg)
	}
}

func TestScaleOutValidation(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantSub string
	}{
		{"kafka without clickhouse", map[string]string{"WEFT_KAFKA_BROKERS": "k:9092"}, "kafka_brokers needs clickhouse_dsn"},
		{"subset without clickhouse", map[string]string{"WEFT_ROLES": "query"}, "needs clickhouse_dsn"},
		{"split ingest without kafka", map[string]string{"WEFT_ROLES": "ingest", "WEFT_CLICKHOUSE_DSN": "http://c:8123/db"}, "need kafka_brokers"},
		{"unknown role", map[string]string{"WEFT_ROLES": "ingest,bake"}, `"bake" is not one of`},
		{"ok query role", map[string]string{"WEFT_ROLES": "query", "WEFT_CLICKHOUSE_DSN": "http://c:8123/db"}, ""},
		{"ok split roles", map[string]string{"WEFT_ROLES": "process", "WEFT_CLICKHOUSE_DSN": "http://c:8123/db", "WEFT_KAFKA_BROKERS": "a:1, b:2"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(nil, env(tc.env))
			if tc.wantSub == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tc.env["WEFT_KAFKA_BROKERS"] != "" && len(cfg.Kafka.Brokers) != 2 {
					t.Fatalf("brokers = %v", cfg.Kafka.Brokers)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("err = %v, want %q", err, tc.wantSub)
			}
		})
	}
}

func TestRetention(t *testing.T) {
	file := writeFile(t, "retention:\n  default: 720h\n  projects:\n    acme/debug: 24h\n    acme/keep: 0s\n")
	cfg, err := Load([]string{"--config", file}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for project, want := range map[string]time.Duration{"acme/debug": 24 * time.Hour, "acme/keep": 0, "other/p": 720 * time.Hour} {
		if got := cfg.Retention.For(project); got != want {
			t.Errorf("retention of %s = %v, want %v", project, got, want)
		}
	}
	bad := writeFile(t, "retention:\n  projects:\n    nope: 1h\n")
	if _, err := Load([]string{"--config", bad}, env(nil)); err == nil || !strings.Contains(err.Error(), "not entity/project") {
		t.Fatalf("bad project key: %v", err)
	}
}

func TestConnections(t *testing.T) {
	file := writeFile(t, "connections:\n  idle_timeout: 5s\n  max_connections: 10\n")
	cfg, err := Load([]string{"--config", file}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConnections()
	want.IdleTimeout, want.MaxConnections = 5*time.Second, 10
	if cfg.Connections != want {
		t.Fatalf("connections = %+v, want %+v", cfg.Connections, want)
	}
	for body, key := range map[string]string{
		"connections:\n  read_timeout: 0s\n":               "connections.read_timeout",
		"connections:\n  max_connections: 0\n":             "connections.max_connections",
		"connections:\n  grpc_max_concurrent_streams: 0\n": "connections.grpc_max_concurrent_streams",
	} {
		if _, err := Load([]string{"--config", writeFile(t, body)}, env(nil)); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: error %v, want one naming %s", body, err, key)
		}
	}
}
