package training

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/protocol"
	"github.com/weftdev/weft/training/trajectory"
)

// Page asks for a page of checkpoints.
type Page struct {
	After      string
	Limit      int
	Descending bool
}

// ListCheckpoints returns a page of the model's checkpoints, each with
// the metrics its worker registered and the per-split metrics /log
// computed at its step.
func (s *Service) ListCheckpoints(ctx context.Context, p auth.Principal, modelID string, page Page) ([]storage.Checkpoint, bool, error) {
	m, err := s.model(ctx, p, modelID, auth.Read)
	if err != nil {
		return nil, false, err
	}
	cs, more, err := s.d.Store.ListCheckpoints(ctx, storage.CheckpointPage{ModelID: m.ID, AfterID: page.After,
		Descending: page.Descending, Limit: page.Limit})
	if err != nil || len(cs) == 0 {
		return cs, more, err
	}
	steps := make([]int64, len(cs))
	for i, c := range cs {
		steps[i] = c.Step
	}
	stats, err := s.d.Store.LogStats(ctx, m.ID, steps)
	if err != nil {
		return nil, false, err
	}
	for i := range cs {
		cs[i].Metrics = withLogMetrics(cs[i].Metrics, stats[cs[i].Step])
	}
	return cs, more, nil
}

// withLogMetrics adds each split's metrics to a checkpoint's:
// <split>/reward (the average), <split>/num_trajectories,
// <split>/num_groups and the average of every trajectory metric.
func withLogMetrics(registered map[string]float64, splits map[string]storage.LogStats) map[string]float64 {
	out := maps.Clone(registered)
	if out == nil {
		out = map[string]float64{}
	}
	for split, st := range splits {
		out[split+"/num_groups"] = float64(st.Groups)
		out[split+"/num_trajectories"] = float64(st.Trajectories)
		if st.Trajectories > 0 {
			out[split+"/reward"] = st.RewardSum / float64(st.Trajectories)
		}
		for name, sum := range st.MetricSums {
			if n := st.MetricCounts[name]; n > 0 {
				out[split+"/"+name] = sum / float64(n)
			}
		}
	}
	return out
}

// CheckpointsDeleted is what deleting checkpoints did.
type CheckpointsDeleted struct {
	DeletedCount  int
	NotFoundSteps []int64
}

// DeleteCheckpoints removes the model's checkpoints of steps with their
// artifact versions; steps it has no checkpoint of are listed, not
// refused.
func (s *Service) DeleteCheckpoints(ctx context.Context, p auth.Principal, modelID string, steps []int64) (CheckpointsDeleted, error) {
	m, err := s.model(ctx, p, modelID, auth.Write)
	if err != nil {
		return CheckpointsDeleted{}, err
	}
	steps = slices.Compact(slices.Sorted(slices.Values(steps)))
	gone, err := s.d.Store.DeleteCheckpoints(ctx, m.ID, steps)
	if err != nil {
		return CheckpointsDeleted{}, err
	}
	if err := s.deleteVersions(ctx, m, gone); err != nil {
		return CheckpointsDeleted{}, err
	}
	found := map[int64]bool{}
	for _, c := range gone {
		found[c.Step] = true
	}
	out := CheckpointsDeleted{DeletedCount: len(gone), NotFoundSteps: []int64{}}
	for _, st := range steps {
		if !found[st] {
			out.NotFoundSteps = append(out.NotFoundSteps, st)
		}
	}
	return out, nil
}

// latestStep is the model's latest checkpoint step, 0 without any.
func (s *Service) latestStep(ctx context.Context, modelID string) (int64, error) {
	cs, _, err := s.d.Store.ListCheckpoints(ctx, storage.CheckpointPage{ModelID: modelID, Descending: true, Limit: 1})
	if err != nil || len(cs) == 0 {
		return 0, err
	}
	return cs[0].Step, nil
}

// Log stores trajectory groups of a split at the model's current step
// and the sums its metrics are computed from.
func (s *Service) Log(ctx context.Context, p auth.Principal, modelID, split string, groups json.RawMessage) error {
	m, err := s.model(ctx, p, modelID, auth.Write)
	if err != nil {
		return err
	}
	if split == "" || len(split) > 64 {
		return schema("field required: name the split, e.g. train or val (at most 64 characters)", "missing", "split")
	}
	stats, err := trajectory.Check(groups, "body", "trajectory_groups")
	if err != nil {
		return err
	}
	step, err := s.latestStep(ctx, m.ID)
	if err != nil {
		return err
	}
	return s.d.Store.AddLogEntry(ctx, storage.TrainingLogEntry{ModelID: m.ID, ID: uuid.NewString(), Step: step, Split: split,
		Groups: groups, Stats: stats, CreatedAt: s.d.Now().UTC()})
}

// ArtifactName is a checkpoint's artifact version, as clients name it.
func ArtifactName(m storage.TrainingModel, step int64) string {
	return fmt.Sprintf("%s/%s:step%d", m.ProjectID, m.Name, step)
}

// checkpointValue is a checkpoint's artifact version value; its
// top-level keys are what automations' ${artifact_metadata.KEY} reads.
type checkpointValue struct {
	ArtifactType string                   `json:"artifact_type"`
	ModelID      string                   `json:"model_id"`
	BaseModel    string                   `json:"base_model"`
	Step         int64                    `json:"step"`
	JobID        string                   `json:"job_id"`
	Metrics      map[string]float64       `json:"metrics"`
	Files        map[string]protocol.File `json:"files"`
}

// readCheckpointValue reads a checkpoint's artifact version.
func (s *Service) readCheckpointValue(ctx context.Context, m storage.TrainingModel, digest string) (checkpointValue, error) {
	res, err := s.d.Objects.ReadObject(ctx, storage.ObjReadReq{ProjectID: m.ProjectID, ObjectID: m.Name, Digest: digest})
	if err != nil {
		return checkpointValue{}, err
	}
	var v checkpointValue
	if err := json.Unmarshal(res.Obj.Val, &v); err != nil || v.ArtifactType != "lora" {
		return checkpointValue{}, fmt.Errorf("%s:%s is no checkpoint of model %s: %w", m.Name, digest, m.ID, storage.ErrNotFound)
	}
	return v, nil
}
