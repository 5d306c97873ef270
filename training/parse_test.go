package training

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/protocol"
	"github.com/weftdev/weft/training/trajectory"
)

func TestParseArtifactURI(t *testing.T) {
	cases := []struct {
		uri  string
		want ArtifactRef
		err  string
	}{
		{"wandb-artifact:///acme/p/agent:step3", ArtifactRef{"acme/p", "agent", "step3"}, ""},
		{"wandb-artifact:///acme/p/agent", ArtifactRef{"acme/p", "agent", "latest"}, ""},
		{"wandb-artifact://acme/p/agent:v0", ArtifactRef{"acme/p", "agent", "v0"}, ""},
		{"wandb-artifact:///acme/p/agent:", ArtifactRef{"acme/p", "agent", "latest"}, ""},
		{"s3://bucket/agent", ArtifactRef{}, "must start with"},
		{"wandb-artifact:///acme/agent:step1", ArtifactRef{}, "<entity>/<project>/<name>"},
		{"wandb-artifact:///acme//agent", ArtifactRef{}, "<entity>/<project>/<name>"},
		{"wandb-artifact:///a/b/c/d", ArtifactRef{}, "<entity>/<project>/<name>"},
	}
	for _, tc := range cases {
		got, err := ParseArtifactURI(tc.uri)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want one with %q", tc.uri, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s = %+v, %v; want %+v", tc.uri, got, err, tc.want)
		}
	}
}

func TestLogMetricsAverageEachSplit(t *testing.T) {
	got := withLogMetrics(map[string]float64{"train/loss": 0.5}, map[string]storage.LogStats{
		"val":   {Groups: 2, Trajectories: 4, RewardSum: 3, MetricSums: map[string]float64{"correct": 1}, MetricCounts: map[string]int64{"correct": 2}},
		"train": {Groups: 1},
	})
	want := map[string]float64{"train/loss": 0.5, "val/num_groups": 2, "val/num_trajectories": 4, "val/reward": 0.75, "val/correct": 0.5,
		"train/num_groups": 1, "train/num_trajectories": 0}
	if len(got) != len(want) {
		t.Fatalf("metrics = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

// FuzzCheckEvents: a worker's event batch is accepted with only the
// reference's progress events of numeric data, or refused naming a path
// in the body; never a panic.
func FuzzCheckEvents(f *testing.F) {
	f.Add([]byte(`{"seq":1,"events":[{"type":"training_started","data":{"num_sequences":2}},{"type":"gradient_step","data":{"loss":1}}]}`))
	f.Add([]byte(`{"seq":3,"events":[{"type":"gradient_step","data":{"loss":"x"}}]}`))
	f.Add([]byte(`{"seq":0,"events":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var batch protocol.Events
		if json.Unmarshal(body, &batch) != nil {
			return
		}
		evs, err := checkEvents(batch)
		var te *trajectory.Error
		switch {
		case err != nil && (!errors.As(err, &te) || te.Loc[0] != "body"):
			t.Fatalf("refusal %v names no body path", err)
		case err == nil && len(evs) != len(batch.Events):
			t.Fatalf("accepted %d of %d events", len(evs), len(batch.Events))
		}
		for _, e := range evs {
			if e.Type != "training_started" && e.Type != "gradient_step" {
				t.Fatalf("accepted an event of type %q", e.Type)
			}
		}
	})
}
