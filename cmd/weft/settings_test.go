package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage/duckdb"
)

// TestSettingsPrecedence checks that keys and migrate read data_dir the
// way serve does: flag, then environment, then the file (from --config or
// WEFT_CONFIG), then the default. The directory the command wrote to says
// which source won.
func TestSettingsPrecedence(t *testing.T) {
	commands := []struct {
		name    string
		args    []string
		creates string
	}{
		{"keys create", []string{"keys", "create", "--entity", "acme"}, auth.KeysFile},
		{"keys list", []string{"keys", "list"}, ""},
		{"migrate", []string{"migrate"}, duckdb.FileName},
	}
	sources := []struct {
		name string
		file bool     // data_dir in the file named by --config
		env  []string // WEFT_* variables set (WEFT_CONFIG, WEFT_DATA_DIR)
		flag bool     // --data-dir given
		want string
	}{
		{"file via --config", true, nil, false, "file"},
		{"file via WEFT_CONFIG", false, []string{"WEFT_CONFIG"}, false, "file"},
		{"env over file", true, []string{"WEFT_DATA_DIR"}, false, "env"},
		{"flag over env and file", true, []string{"WEFT_DATA_DIR"}, true, "flag"},
		{"flag over file", true, nil, true, "flag"},
	}
	for _, cmd := range commands {
		for _, src := range sources {
			t.Run(cmd.name+"/"+src.name, func(t *testing.T) {
				dirs := map[string]string{"file": t.TempDir(), "env": t.TempDir(), "flag": t.TempDir()}
				cfgPath := writeConfig(t, "data_dir: "+dirs["file"]+"\n")
				env := map[string]string{}
				for _, k := range src.env {
					env[k] = map[string]string{"WEFT_CONFIG": cfgPath, "WEFT_DATA_DIR": dirs["env"]}[k]
				}
				args := append([]string(nil), cmd.args...)
				if src.file {
					args = append(args, "--config", cfgPath)
				}
				if src.flag {
					args = append(args, "--data-dir", dirs["flag"])
				}
				mustRunWeft(t, env, args...)
				if cmd.creates != "" {
					checkOnlyIn(t, dirs, src.want, cmd.creates)
				}
			})
		}
	}
}

// checkOnlyIn fails unless name exists in dirs[want] and in no other dir.
func checkOnlyIn(t *testing.T, dirs map[string]string, want, name string) {
	t.Helper()
	for src, dir := range dirs {
		_, err := os.Stat(filepath.Join(dir, name))
		if exists := err == nil; exists != (src == want) {
			t.Errorf("%s in the %s dir: %v; want it only in the %s dir", name, src, exists, want)
		}
	}
}

// TestKeysSharedSettings runs a key's life cycle with the settings coming
// from different sources each time, as an operator would from the server's
// weft.yaml, WEFT_* variables and flags.
func TestKeysSharedSettings(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeConfig(t, "data_dir: "+dir+"\nlog_level: debug\n")
	out := mustRunWeft(t, nil, "keys", "create", "--config", cfgPath, "--entity", "acme", "--role", "viewer")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); !strings.HasPrefix(lines[len(lines)-1], auth.KeyPrefix) {
		t.Fatalf("keys create printed %q; want the key last", out)
	}
	list := mustRunWeft(t, map[string]string{"WEFT_DATA_DIR": dir}, "keys", "list")
	id := keyID(t, list, "acme")
	mustRunWeft(t, map[string]string{"WEFT_CONFIG": cfgPath}, "keys", "revoke", id)
	if list := mustRunWeft(t, nil, "keys", "list", "--data-dir", dir); !strings.Contains(list, "revoked") {
		t.Fatalf("after revoke:\n%s", list)
	}
}

// TestKeysOnClickHouse keeps a key in ClickHouse when clickhouse_dsn comes
// from a flag, and finds it when it comes from the environment.
func TestKeysOnClickHouse(t *testing.T) {
	dsn := clickhouseDSN(t)
	mustRunWeft(t, nil, "keys", "create", "--clickhouse-dsn", dsn, "--entity", "acme", "--data-dir", t.TempDir())
	list := mustRunWeft(t, map[string]string{"WEFT_CLICKHOUSE_DSN": dsn}, "keys", "list", "--data-dir", t.TempDir())
	keyID(t, list, "acme")
}

func keyID(t *testing.T, list, entity string) string {
	t.Helper()
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == entity {
			return f[0]
		}
	}
	t.Fatalf("no key for %s in:\n%s", entity, list)
	return ""
}

// TestSettingsErrors checks that keys and migrate reject what serve
// rejects, naming the setting.
func TestSettingsErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantSub string
	}{
		{"keys: unknown file key", []string{"keys", "list", "--config", "FILE:data_dirr: x\n"}, nil, `unknown key "data_dirr"`},
		{"migrate: unknown file key", []string{"migrate", "--config", "FILE:data_dirr: x\n"}, nil, `unknown key "data_dirr"`},
		{"keys: bad env", []string{"keys", "list"}, map[string]string{"WEFT_LOG_LEVEL": "loud"}, "log_level"},
		{"migrate: kafka without clickhouse", []string{"migrate", "--kafka-brokers", "127.0.0.1:1"}, nil, "kafka_brokers needs clickhouse_dsn"},
		{"migrate: stray argument", []string{"migrate", "extra"}, nil, `unexpected argument "extra"`},
		{"keys: unknown flag", []string{"keys", "list", "--nope"}, nil, "nope"},
		{"migrate: server-only flag", []string{"migrate", "--listen", "0.0.0.0:1"}, nil, "-listen"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				if body, ok := strings.CutPrefix(a, "FILE:"); ok {
					args[i] = writeConfig(t, body)
				}
			}
			_, err := runWeft(t, tc.env, args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("err = %v; want it to contain %q", err, tc.wantSub)
			}
		})
	}
}
