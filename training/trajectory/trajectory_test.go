package trajectory

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/weftdev/weft/storage"
)

func TestCheckSumsAnARTBatch(t *testing.T) {
	raw, err := os.ReadFile("testdata/art_groups.json")
	if err != nil {
		t.Fatal(err)
	}
	stats, err := Check(raw, "body", "trajectory_groups")
	if err != nil {
		t.Fatal(err)
	}
	want := storage.LogStats{Groups: 2, Trajectories: 3, RewardSum: 1.5,
		MetricSums: map[string]float64{"correct": 1, "num_turns": 4}, MetricCounts: map[string]int64{"correct": 2, "num_turns": 2}}
	if !reflect.DeepEqual(stats, want) {
		t.Fatalf("stats = %+v, want %+v", stats, want)
	}
}

func TestCheckNamesTheBadPath(t *testing.T) {
	cases := []struct {
		name string
		body string
		loc  []any
	}{
		{"missing", `null`, []any{"body", "trajectory_groups"}},
		{"not a list", `{"trajectories":[]}`, []any{"body", "trajectory_groups"}},
		{"group not an object", `[3]`, []any{"body", "trajectory_groups", 0}},
		{"no trajectories", `[{}]`, []any{"body", "trajectory_groups", 0, "trajectories"}},
		{"reward a string", `[{"trajectories":[{},{"reward":"high"}]}]`, []any{"body", "trajectory_groups", 0, "trajectories", 1, "reward"}},
		{"metric a string", `[{"trajectories":[{"metrics":{"acc":"x"}}]}]`, []any{"body", "trajectory_groups", 0, "trajectories", 0, "metrics", "acc"}},
		{"bad role", `[{"trajectories":[{"messages_and_choices":[{"role":"robot"}]}]}]`,
			[]any{"body", "trajectory_groups", 0, "trajectories", 0, "messages_and_choices", 0, "role"}},
		{"neither message nor choice", `[{"trajectories":[{"messages_and_choices":[{"content":"hi"}]}]}]`,
			[]any{"body", "trajectory_groups", 0, "trajectories", 0, "messages_and_choices", 0}},
		{"choice from the user", `[{"trajectories":[{"messages_and_choices":[{"finish_reason":"stop","message":{"role":"user"}}]}]}]`,
			[]any{"body", "trajectory_groups", 0, "trajectories", 0, "messages_and_choices", 0, "message", "role"}},
		{"both histories", `[{"trajectories":[{"messages_and_choices":[{"role":"user"}],"exchanges":{}}]}]`,
			[]any{"body", "trajectory_groups", 0, "trajectories", 0, "exchanges"}},
		{"tool type", `[{"trajectories":[{"tools":[{"type":"web"}]}]}]`, []any{"body", "trajectory_groups", 0, "trajectories", 0, "tools", 0, "type"}},
		{"tool name", `[{"trajectories":[{"tools":[{"type":"function","function":{}}]}]}]`,
			[]any{"body", "trajectory_groups", 0, "trajectories", 0, "tools", 0, "function", "name"}},
		{"policy version", `[{"trajectories":[{"final_policy_version":1.5}]}]`,
			[]any{"body", "trajectory_groups", 0, "trajectories", 0, "final_policy_version"}},
		{"metadata nested", `[{"trajectories":[{"metadata":{"a":{"b":1}}}]}]`, []any{"body", "trajectory_groups", 0, "trajectories", 0, "metadata", "a"}},
		{"logs", `[{"trajectories":[{"logs":["a",2]}]}]`, []any{"body", "trajectory_groups", 0, "trajectories", 0, "logs", 1}},
		{"history without messages", `[{"trajectories":[{"additional_histories":[{}]}]}]`,
			[]any{"body", "trajectory_groups", 0, "trajectories", 0, "additional_histories", 0, "messages_and_choices"}},
		{"exception message", `[{"trajectories":[],"exceptions":[{"message":5}]}]`, []any{"body", "trajectory_groups", 0, "exceptions", 0, "message"}},
		{"group logs", `[{"trajectories":[],"logs":"x"}]`, []any{"body", "trajectory_groups", 0, "logs"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(json.RawMessage(tc.body), "body", "trajectory_groups")
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if !reflect.DeepEqual(e.Loc, tc.loc) || e.Msg == "" || e.Type == "" {
				t.Fatalf("error at %v (%s: %s), want at %v", e.Loc, e.Type, e.Msg, tc.loc)
			}
		})
	}
}

// FuzzCheck: any body is accepted or refused with a path inside the
// trajectory groups, never a panic; accepted bodies count sensibly.
func FuzzCheck(f *testing.F) {
	raw, err := os.ReadFile("testdata/art_groups.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`[{"trajectories":[{"reward":1e308,"metrics":{"a":true}}]}]`))
	f.Add([]byte(`[{"trajectories":[{"messages_and_choices":[{"finish_reason":null,"message":{"role":"assistant"}}]}]}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		stats, err := Check(body, "trajectory_groups")
		if err != nil {
			e, ok := err.(*Error)
			if !ok || len(e.Loc) == 0 || e.Loc[0] != "trajectory_groups" {
				t.Fatalf("error %v has no path in the groups", err)
			}
			return
		}
		if stats.Groups < 0 || stats.Trajectories < 0 || len(stats.MetricSums) != len(stats.MetricCounts) {
			t.Fatalf("odd stats %+v", stats)
		}
	})
}
