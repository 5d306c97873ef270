package config

import (
	"strings"
	"testing"

	"github.com/weftdev/weft/storage/querylang"
)

// TestQueriesLimits checks the queries section: its defaults, every key
// read from the file, and negative values and typos refused by name.
func TestQueriesLimits(t *testing.T) {
	if got := Default().Queries.Limits; got != querylang.DefaultLimits() {
		t.Fatalf("default queries = %+v; want %+v", got, querylang.DefaultLimits())
	}
	file := writeFile(t, "queries:\n  max_query_bytes: 1000\n  max_operands: 2\n  max_in_list: 3\n  max_nodes: 4\n"+
		"  max_string_bytes: 5\n  max_path_segments: 6\n  max_sort_keys: 7\n")
	cfg, err := Load([]string{"--config", file}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := querylang.Limits{MaxQueryBytes: 1000, MaxOperands: 2, MaxInList: 3, MaxNodes: 4, MaxStringBytes: 5,
		MaxPathSegments: 6, MaxSortKeys: 7}
	if cfg.Queries.Limits != want {
		t.Fatalf("queries = %+v; want %+v", cfg.Queries.Limits, want)
	}
	partial, err := Load([]string{"--config", writeFile(t, "queries:\n  max_operands: 500\n")}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if partial.Queries.MaxOperands != 500 || partial.Queries.MaxNodes != querylang.DefaultMaxNodes {
		t.Fatalf("one key set: %+v", partial.Queries)
	}
	for body, msg := range map[string]string{
		"queries:\n  max_operands: -1\n":  "queries.max_operands: -1 must not be negative",
		"queries:\n  max_sort_keys: -3\n": "queries.max_sort_keys: -3 must not be negative",
		"queries:\n  max_operand: 5\n":    `unknown key "max_operand"`,
	} {
		if _, err := Load([]string{"--config", writeFile(t, body)}, env(nil)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v; want it to contain %q", body, err, msg)
		}
	}
}
