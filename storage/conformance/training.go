package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// runTraining runs every training case (models, checkpoints, log
// entries, jobs, events, snapshots) against fresh stores.
func runTraining(t *testing.T, newStore func(t *testing.T) storage.TrainingBackend) {
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.TrainingBackend)
	}{
		{"ModelsUniquePerProjectAndScoped", testModelsUnique},
		{"ModelDeleteTakesCheckpointsAndLogs", testModelDelete},
		{"CheckpointsPageByStep", testCheckpointsPage},
		{"CheckpointsReplaceAndDelete", testCheckpointsReplaceAndDelete},
		{"LogStatsSumByStepAndSplit", testLogStats},
		{"JobsKeepTheNewestVersion", testJobsVersioned},
		{"OpenJobsAndCounts", testOpenJobs},
		{"EventsWrittenOnceAndPaged", testEventsPaged},
		{"JobInputsAndSnapshots", testInputsSnapshots},
		{"ModelsListedByProject", testModelsListed},
		{"JobsListedNewestFirst", testJobsListed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func trainingModel(id, project, name string) storage.TrainingModel {
	return storage.TrainingModel{ID: id, ProjectID: project, Name: name, BaseModel: "OpenPipe/Qwen3-14B-Instruct", CreatedAt: base}
}

func testModelsUnique(t *testing.T, s storage.TrainingBackend) {
	m, created, err := s.CreateTrainingModel(bg, trainingModel("m1", "acme/p", "agent"))
	must(t, err)
	if !created || m.ID != "m1" || !m.CreatedAt.Equal(base) {
		t.Fatalf("first create = %+v created=%v", m, created)
	}
	again, created, err := s.CreateTrainingModel(bg, trainingModel("m1", "acme/p", "agent"))
	must(t, err)
	if created || !reflect.DeepEqual(again, m) {
		t.Fatalf("second create = %+v created=%v, want the stored %+v", again, created, m)
	}
	_, created, err = s.CreateTrainingModel(bg, trainingModel("m2", "acme/q", "agent"))
	must(t, err)
	if !created {
		t.Fatal("the same name in another project was not created")
	}
	for _, tc := range []struct {
		entity string
		found  bool
	}{{"acme", true}, {"*", true}, {"rival", false}} {
		got, err := s.GetTrainingModel(bg, tc.entity, "m1")
		if tc.found && (err != nil || got.Name != "agent" || got.ProjectID != "acme/p") {
			t.Fatalf("get as %s = %+v, %v", tc.entity, got, err)
		}
		if !tc.found {
			wantKind(t, "model read by another entity", err, storage.ErrNotFound)
		}
	}
	found, err := s.FindTrainingModel(bg, "acme/q", "agent")
	must(t, err)
	if found.ID != "m2" {
		t.Fatalf("find = %+v, want m2", found)
	}
	_, err = s.FindTrainingModel(bg, "acme/p", "nope")
	wantKind(t, "find an unknown name", err, storage.ErrNotFound)
}

func checkpoint(model string, step int64) storage.Checkpoint {
	return storage.Checkpoint{ModelID: model, ID: fmt.Sprintf("%s-c%d", model, step), Step: step, Digest: fmt.Sprintf("d%d", step),
		JobID: "j1", Metrics: map[string]float64{"train/loss": float64(step) / 10}, CreatedAt: base.Add(time.Duration(step) * time.Second)}
}

func testModelDelete(t *testing.T, s storage.TrainingBackend) {
	m, _, err := s.CreateTrainingModel(bg, trainingModel("m1", "acme/p", "agent"))
	must(t, err)
	_, _, err = s.CreateTrainingModel(bg, trainingModel("m2", "acme/p", "other"))
	must(t, err)
	for _, c := range []storage.Checkpoint{checkpoint("m1", 1), checkpoint("m1", 2), checkpoint("m2", 1)} {
		must(t, s.PutCheckpoint(bg, c))
	}
	must(t, s.AddLogEntry(bg, logEntry("m1", "l1", 1, "val", 1)))
	gone, err := s.DeleteTrainingModel(bg, m)
	must(t, err)
	if len(gone) != 2 {
		t.Fatalf("delete removed %d checkpoints, want 2", len(gone))
	}
	_, err = s.GetTrainingModel(bg, "acme", "m1")
	wantKind(t, "deleted model", err, storage.ErrNotFound)
	stats, err := s.LogStats(bg, "m1", []int64{1})
	must(t, err)
	if len(stats) != 0 {
		t.Fatalf("log stats after delete = %+v", stats)
	}
	page, _, err := s.ListCheckpoints(bg, storage.CheckpointPage{ModelID: "m2", Limit: 10})
	must(t, err)
	if len(page) != 1 {
		t.Fatalf("the other model lost its checkpoints: %+v", page)
	}
	if _, created, err := s.CreateTrainingModel(bg, trainingModel("m1", "acme/p", "agent")); err != nil || !created {
		t.Fatalf("re-create after delete: created=%v err=%v", created, err)
	}
}

func steps(cs []storage.Checkpoint) []int64 {
	out := []int64{}
	for _, c := range cs {
		out = append(out, c.Step)
	}
	return out
}

func testCheckpointsPage(t *testing.T, s storage.TrainingBackend) {
	for step := int64(1); step <= 5; step++ {
		must(t, s.PutCheckpoint(bg, checkpoint("m1", step)))
	}
	must(t, s.PutCheckpoint(bg, checkpoint("m2", 9)))
	cases := []struct {
		name  string
		page  storage.CheckpointPage
		steps []int64
		more  bool
	}{
		{"first page", storage.CheckpointPage{ModelID: "m1", Limit: 2}, []int64{1, 2}, true},
		{"after 2", storage.CheckpointPage{ModelID: "m1", AfterID: "m1-c2", Limit: 2}, []int64{3, 4}, true},
		{"after 4", storage.CheckpointPage{ModelID: "m1", AfterID: "m1-c4", Limit: 2}, []int64{5}, false},
		{"after the last", storage.CheckpointPage{ModelID: "m1", AfterID: "m1-c5", Limit: 2}, []int64{}, false},
		{"latest", storage.CheckpointPage{ModelID: "m1", Descending: true, Limit: 1}, []int64{5}, true},
		{"desc after 3", storage.CheckpointPage{ModelID: "m1", AfterID: "m1-c3", Descending: true, Limit: 5}, []int64{2, 1}, false},
		{"a model without any", storage.CheckpointPage{ModelID: "m3", Limit: 5}, []int64{}, false},
	}
	for _, tc := range cases {
		got, more, err := s.ListCheckpoints(bg, tc.page)
		must(t, err)
		if !reflect.DeepEqual(steps(got), tc.steps) || more != tc.more {
			t.Fatalf("%s: steps %v more %v, want %v %v", tc.name, steps(got), more, tc.steps, tc.more)
		}
	}
	_, _, err := s.ListCheckpoints(bg, storage.CheckpointPage{ModelID: "m1", AfterID: "m2-c9", Limit: 2})
	wantKind(t, "cursor of another model", err, storage.ErrInvalidArgument)
	got, err := s.GetCheckpoint(bg, "m1", 3)
	must(t, err)
	if want := checkpoint("m1", 3); !reflect.DeepEqual(got, want) {
		t.Fatalf("get = %+v, want %+v", got, want)
	}
	_, err = s.GetCheckpoint(bg, "m1", 7)
	wantKind(t, "missing step", err, storage.ErrNotFound)
}

func testCheckpointsReplaceAndDelete(t *testing.T, s storage.TrainingBackend) {
	for step := int64(1); step <= 3; step++ {
		must(t, s.PutCheckpoint(bg, checkpoint("m1", step)))
	}
	again := checkpoint("m1", 2)
	again.ID, again.Digest, again.Metrics = "m1-c2b", "d2b", map[string]float64{}
	must(t, s.PutCheckpoint(bg, again))
	got, err := s.GetCheckpoint(bg, "m1", 2)
	must(t, err)
	if !reflect.DeepEqual(got, again) {
		t.Fatalf("replaced step 2 = %+v, want %+v", got, again)
	}
	gone, err := s.DeleteCheckpoints(bg, "m1", []int64{2, 9})
	must(t, err)
	if !reflect.DeepEqual(steps(gone), []int64{2}) {
		t.Fatalf("deleted %v, want [2]", steps(gone))
	}
	left, _, err := s.ListCheckpoints(bg, storage.CheckpointPage{ModelID: "m1", Limit: 10})
	must(t, err)
	if !reflect.DeepEqual(steps(left), []int64{1, 3}) {
		t.Fatalf("left %v, want [1 3]", steps(left))
	}
	gone, err = s.DeleteCheckpoints(bg, "m1", []int64{2})
	must(t, err)
	if len(gone) != 0 {
		t.Fatalf("deleting twice removed %v", steps(gone))
	}
}

func logEntry(model, id string, step int64, split string, reward float64) storage.TrainingLogEntry {
	return storage.TrainingLogEntry{ModelID: model, ID: id, Step: step, Split: split, Groups: json.RawMessage(`[{"trajectories":[]}]`),
		Stats: storage.LogStats{Groups: 1, Trajectories: 2, RewardSum: reward, MetricSums: map[string]float64{"acc": 1},
			MetricCounts: map[string]int64{"acc": 2}}, CreatedAt: base}
}

func testLogStats(t *testing.T, s storage.TrainingBackend) {
	must(t, s.AddLogEntry(bg, logEntry("m1", "l1", 0, "val", 1.5)))
	must(t, s.AddLogEntry(bg, logEntry("m1", "l2", 0, "val", 0.5)))
	must(t, s.AddLogEntry(bg, logEntry("m1", "l3", 0, "train", 2)))
	must(t, s.AddLogEntry(bg, logEntry("m1", "l4", 1, "val", 4)))
	must(t, s.AddLogEntry(bg, logEntry("m2", "l5", 0, "val", 9)))
	got, err := s.LogStats(bg, "m1", []int64{0, 5})
	must(t, err)
	want := map[int64]map[string]storage.LogStats{0: {
		"val": {Groups: 2, Trajectories: 4, RewardSum: 2, MetricSums: map[string]float64{"acc": 2}, MetricCounts: map[string]int64{"acc": 4}},
		"train": {Groups: 1, Trajectories: 2, RewardSum: 2, MetricSums: map[string]float64{"acc": 1},
			MetricCounts: map[string]int64{"acc": 2}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stats = %+v\nwant %+v", got, want)
	}
}
