package config

import (
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/traceapi"
)

// TestQueriesBudget checks the run-time budget keys of the queries
// section: defaults, every key read from the file beside the limits, and
// values that cannot work refused by name.
func TestQueriesBudget(t *testing.T) {
	if got := Default().Queries.Budget; got != traceapi.DefaultBudget() {
		t.Fatalf("default budget = %+v; want %+v", got, traceapi.DefaultBudget())
	}
	file := writeFile(t, "queries:\n  max_operands: 50\n  max_duration: 5s\n  max_concurrent: 6\n"+
		"  max_concurrent_per_key: 2\n  max_wait: 250ms\n")
	cfg, err := Load([]string{"--config", file}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := traceapi.Budget{MaxDuration: 5 * time.Second, MaxConcurrent: 6, MaxConcurrentPerKey: 2, MaxWait: 250 * time.Millisecond}
	if cfg.Queries.Budget != want || cfg.Queries.MaxOperands != 50 || cfg.Queries.MaxNodes != querylang.DefaultMaxNodes {
		t.Fatalf("queries = %+v; want budget %+v beside max_operands 50 and default limits", cfg.Queries, want)
	}
	partial, err := Load([]string{"--config", writeFile(t, "queries:\n  max_duration: 1m\n")}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if b := partial.Queries.Budget; b.MaxDuration != time.Minute || b.MaxConcurrent != traceapi.DefaultMaxConcurrent || b.MaxWait != traceapi.DefaultMaxWait {
		t.Fatalf("one key set: %+v", b)
	}
	for body, msg := range map[string]string{
		"queries:\n  max_duration: -1s\n":                              "queries.max_duration: -1s must not be negative",
		"queries:\n  max_concurrent: -2\n":                             "queries.max_concurrent: -2 must not be negative",
		"queries:\n  max_concurrent: 4\n  max_concurrent_per_key: 5\n": "queries.max_concurrent_per_key: 5 is more than queries.max_concurrent (4)",
		"queries:\n  max_duration: soon\n":                             "cannot unmarshal",
		"queries:\n  max_durations: 5s\n":                              `unknown key "max_durations"`,
	} {
		if _, err := Load([]string{"--config", writeFile(t, body)}, env(nil)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v; want it to contain %q", body, err, msg)
		}
	}
}
