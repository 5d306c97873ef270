package config

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// TestRegisterFlagsScope checks that the admin scope takes the flags that
// locate the store and Kafka, rejects the server-only ones, and resolves
// with the same precedence as Load.
func TestRegisterFlagsScope(t *testing.T) {
	file := writeFile(t, "data_dir: /from/file\nlisten: 127.0.0.1:1000\n")
	tests := []struct {
		name     string
		scope    Scope
		args     []string
		env      map[string]string
		wantErr  string
		wantDir  string
		wantDSN  string
		wantAddr string
	}{
		{"admin: flag over env over file", AdminFlags, []string{"--config", file, "--data-dir", "/from/flag"},
			map[string]string{"WEFT_DATA_DIR": "/from/env"}, "", "/from/flag", "", "127.0.0.1:1000"},
		{"admin: env over file", AdminFlags, []string{"--config", file}, map[string]string{"WEFT_DATA_DIR": "/from/env"}, "", "/from/env", "", "127.0.0.1:1000"},
		{"admin: file from WEFT_CONFIG", AdminFlags, nil, map[string]string{"WEFT_CONFIG": file}, "", "/from/file", "", "127.0.0.1:1000"},
		{"admin: dsn flag", AdminFlags, []string{"--clickhouse-dsn", "http://c:8123/db"}, nil, "", "./weft-data", "http://c:8123/db", "127.0.0.1:6345"},
		{"admin: env of a server-only setting still applies", AdminFlags, nil, map[string]string{"WEFT_LISTEN": "127.0.0.1:2000"}, "", "./weft-data", "", "127.0.0.1:2000"},
		{"admin: server-only flag rejected", AdminFlags, []string{"--listen", "127.0.0.1:3000"}, nil, "-listen", "", "", ""},
		{"serve: server-only flag taken", ServeFlags, []string{"--listen", "127.0.0.1:3000"}, nil, "", "./weft-data", "", "127.0.0.1:3000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := RegisterFlags(fs, tc.scope, env(tc.env))
			err := fs.Parse(tc.args)
			var cfg Config
			if err == nil {
				cfg, err = f.Config()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.DataDir != tc.wantDir || cfg.ClickHouseDSN != tc.wantDSN || cfg.Listen != tc.wantAddr {
				t.Fatalf("data_dir %q, clickhouse_dsn %q, listen %q; want %q, %q, %q",
					cfg.DataDir, cfg.ClickHouseDSN, cfg.Listen, tc.wantDir, tc.wantDSN, tc.wantAddr)
			}
		})
	}
}
