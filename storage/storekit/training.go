package storekit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
)

// Column lists of the training tables, the same in both backends.
const (
	TrainingModelColumns = "id, project_id, name, base_model, created_at"
	CheckpointColumns    = "model_id, id, step, digest, job_id, metrics, created_at"
	LogEntryColumns      = "model_id, id, step, split, groups, stats, created_at"
	TrainingJobColumns   = `id, project_id, model_id, kind, status, attempts, max_attempts, target_step,
	checkpoint_step, lease_id, worker, lease_until, lease_ack, last_seq, cancel_requested, error_message,
	created_at, queued_at, training_start, training_end, version`
	TrainingEventColumns = "job_id, seq, id, type, data, created_at"
)

// EntityOf is the entity part of a project id.
func EntityOf(projectID string) string {
	entity, _, _ := strings.Cut(projectID, "/")
	return entity
}

// AllEntities is the entity scope that reads every entity's rows (an
// instance-wide key's).
const AllEntities = "*"

// EncodeMetrics is the stored form of checkpoint metrics: a JSON object.
func EncodeMetrics(m map[string]float64) string {
	if m == nil {
		m = map[string]float64{}
	}
	b, err := json.Marshal(m)
	if err != nil { // NaN or an infinity: the service refuses them first
		return "{}"
	}
	return string(b)
}

// DecodeMetrics reads EncodeMetrics's form back.
func DecodeMetrics(s string) (map[string]float64, error) {
	m := map[string]float64{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("stored checkpoint metrics %q: %w", s, err)
	}
	return m, nil
}

// logStatsForm is the stored form of storage.LogStats.
type logStatsForm struct {
	Groups       int64              `json:"groups"`
	Trajectories int64              `json:"trajectories"`
	RewardSum    float64            `json:"reward_sum"`
	MetricSums   map[string]float64 `json:"metric_sums"`
	MetricCounts map[string]int64   `json:"metric_counts"`
}

// EncodeLogStats is the stored form of log stats: a JSON object.
func EncodeLogStats(s storage.LogStats) string {
	b, err := json.Marshal(logStatsForm(s))
	if err != nil {
		return "{}"
	}
	return string(b)
}

// DecodeLogStats reads EncodeLogStats's form back.
func DecodeLogStats(s string) (storage.LogStats, error) {
	var f logStatsForm
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		return storage.LogStats{}, fmt.Errorf("stored log stats: %w", err)
	}
	return storage.LogStats(f), nil
}

// AddLogStats adds b's sums into a.
func AddLogStats(a, b storage.LogStats) storage.LogStats {
	out := storage.LogStats{Groups: a.Groups + b.Groups, Trajectories: a.Trajectories + b.Trajectories,
		RewardSum: a.RewardSum + b.RewardSum, MetricSums: map[string]float64{}, MetricCounts: map[string]int64{}}
	for _, s := range []storage.LogStats{a, b} {
		for k, v := range s.MetricSums {
			out.MetricSums[k] += v
		}
		for k, v := range s.MetricCounts {
			out.MetricCounts[k] += v
		}
	}
	return out
}

// LogStatsCollector sums log entries by step and split as a backend
// reads them.
type LogStatsCollector map[int64]map[string]storage.LogStats

// Add decodes one entry's stats and adds them to its step and split.
func (c LogStatsCollector) Add(step int64, split, stats string) error {
	s, err := DecodeLogStats(stats)
	if err != nil {
		return err
	}
	if c[step] == nil {
		c[step] = map[string]storage.LogStats{}
	}
	c[step][split] = AddLogStats(c[step][split], s)
	return nil
}

// PageOf cuts rows read with one extra to limit and says whether more
// follow.
func PageOf[T any](rows []T, limit int) ([]T, bool) {
	if len(rows) > limit {
		return rows[:limit], true
	}
	return rows, false
}

// CheckpointOrder is how a checkpoint page compares steps with its
// cursor's step and orders them: ascending unless Descending.
func CheckpointOrder(p storage.CheckpointPage) (cmp, dir string) {
	if p.Descending {
		return "<", "DESC"
	}
	return ">", "ASC"
}

// NoCheckpoint is the error of a page cursor naming no checkpoint.
func NoCheckpoint(p storage.CheckpointPage) error {
	return fmt.Errorf("after: %q is not the id of a checkpoint of model %s; pass the last id of the previous page: %w",
		p.AfterID, p.ModelID, storage.ErrInvalidArgument)
}

// NoEvent is the error of an event cursor naming no event of the job.
func NoEvent(jobID, eventID string) error {
	return fmt.Errorf("after: %q is not the id of an event of training job %s; pass the last id of the previous page: %w",
		eventID, jobID, storage.ErrInvalidArgument)
}

// NoJob is the error of a job page cursor naming no job of the project.
func NoJob(p storage.TrainingJobPage) error {
	return fmt.Errorf("after: %q is not the id of a training job of project %s; pass the last id of the previous page: %w",
		p.AfterID, p.ProjectID, storage.ErrInvalidArgument)
}

// SortModels orders models by name, as a listing returns them.
func SortModels(ms []storage.TrainingModel) {
	slices.SortFunc(ms, func(a, b storage.TrainingModel) int { return strings.Compare(a.Name, b.Name) })
}
