package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// CreateTrainingModel implements storage.TrainingModelStore. Two
// replicas creating the same name at once both insert; the caller derives
// the id from the name, so they insert the same row.
func (s *Store) CreateTrainingModel(ctx context.Context, m storage.TrainingModel) (storage.TrainingModel, bool, error) {
	defer s.projects.lock([]string{"training-models:" + m.ProjectID})()
	if found, err := s.FindTrainingModel(ctx, m.ProjectID, m.Name); err == nil {
		return found, false, nil
	}
	m.CreatedAt = m.CreatedAt.UTC().Truncate(time.Microsecond)
	if err := s.insertTrainingModel(ctx, m, false); err != nil {
		return storage.TrainingModel{}, false, err
	}
	return m, true, nil
}

func (s *Store) insertTrainingModel(ctx context.Context, m storage.TrainingModel, deleted bool) error {
	return s.insertBatch(ctx, "training_models", storekit.TrainingModelColumns+", entity, version, deleted", 1, func(int) []any {
		return []any{m.ID, m.ProjectID, m.Name, m.BaseModel, m.CreatedAt.UTC(), storekit.EntityOf(m.ProjectID), s.versions.next(0), flag(deleted)}
	})
}

// GetTrainingModel implements storage.TrainingModelStore.
func (s *Store) GetTrainingModel(ctx context.Context, entity, id string) (storage.TrainingModel, error) {
	where, args := "id = {id:String}", []any{clickhouse.Named("id", id)}
	if entity != storekit.AllEntities {
		where, args = where+" AND entity = {entity:String}", append(args, clickhouse.Named("entity", entity))
	}
	ms, err := s.trainingModels(ctx, where, args...)
	return storekit.First(ms, err, fmt.Sprintf("model %q does not exist", id))
}

// FindTrainingModel implements storage.TrainingModelStore.
func (s *Store) FindTrainingModel(ctx context.Context, projectID, name string) (storage.TrainingModel, error) {
	ms, err := s.trainingModels(ctx, "project_id = {project:String} AND name = {name:String}",
		clickhouse.Named("project", projectID), clickhouse.Named("name", name))
	return storekit.First(ms, err, fmt.Sprintf("project %q has no model named %q", projectID, name))
}

func (s *Store) trainingModels(ctx context.Context, where string, args ...any) ([]storage.TrainingModel, error) {
	var out []storage.TrainingModel
	err := s.eachRow(ctx, "read training models", "SELECT "+storekit.TrainingModelColumns+" FROM training_models FINAL WHERE "+
		where+" AND NOT deleted", func(rows driver.Rows) error {
		var m storage.TrainingModel
		err := rows.Scan(&m.ID, &m.ProjectID, &m.Name, &m.BaseModel, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		out = append(out, m)
		return err
	}, args...)
	return out, err
}

// DeleteTrainingModel implements storage.TrainingModelStore with
// tombstones for the model, its checkpoints and its log entries.
func (s *Store) DeleteTrainingModel(ctx context.Context, m storage.TrainingModel) ([]storage.Checkpoint, error) {
	gone, err := s.readCheckpoints(ctx, "model_id = {model:String}", "", clickhouse.Named("model", m.ID))
	if err != nil {
		return nil, err
	}
	if err := s.insertCheckpoints(ctx, gone, true); err != nil {
		return nil, err
	}
	ids, err := s.stringColumn(ctx, "log entry ids", "SELECT id FROM training_log_entries FINAL WHERE model_id = {model:String} AND NOT deleted",
		clickhouse.Named("model", m.ID))
	if err != nil {
		return nil, err
	}
	if err := s.insertBatch(ctx, "training_log_entries", storekit.LogEntryColumns+", version, deleted", len(ids), func(i int) []any {
		return []any{m.ID, ids[i], int64(0), "", "", "{}", time.Unix(0, 0).UTC(), s.versions.next(0), flag(true)}
	}); err != nil {
		return nil, err
	}
	return gone, s.insertTrainingModel(ctx, m, true)
}

// PutCheckpoint implements storage.TrainingModelStore.
func (s *Store) PutCheckpoint(ctx context.Context, c storage.Checkpoint) error {
	return s.insertCheckpoints(ctx, []storage.Checkpoint{c}, false)
}

func (s *Store) insertCheckpoints(ctx context.Context, cs []storage.Checkpoint, deleted bool) error {
	return s.insertBatch(ctx, "training_checkpoints", storekit.CheckpointColumns+", version, deleted", len(cs), func(i int) []any {
		c := cs[i]
		return []any{c.ModelID, c.ID, c.Step, c.Digest, c.JobID, storekit.EncodeMetrics(c.Metrics), c.CreatedAt.UTC(),
			s.versions.next(0), flag(deleted)}
	})
}

// ListCheckpoints implements storage.TrainingModelStore.
func (s *Store) ListCheckpoints(ctx context.Context, p storage.CheckpointPage) ([]storage.Checkpoint, bool, error) {
	cmp, dir := storekit.CheckpointOrder(p)
	where, args := "model_id = {model:String}", []any{clickhouse.Named("model", p.ModelID)}
	if p.AfterID != "" {
		after, err := s.readCheckpoints(ctx, where+" AND id = {after:String}", "", append(args, clickhouse.Named("after", p.AfterID))...)
		if err != nil {
			return nil, false, err
		}
		if len(after) == 0 {
			return nil, false, storekit.NoCheckpoint(p)
		}
		where, args = where+" AND step "+cmp+" {step:Int64}", append(args, clickhouse.Named("step", after[0].Step))
	}
	cs, err := s.readCheckpoints(ctx, where, "ORDER BY step "+dir+" LIMIT {limit:UInt32}",
		append(args, clickhouse.Named("limit", uint32(p.Limit+1)))...)
	if err != nil {
		return nil, false, err
	}
	page, more := storekit.PageOf(cs, p.Limit)
	return page, more, nil
}

// GetCheckpoint implements storage.TrainingModelStore.
func (s *Store) GetCheckpoint(ctx context.Context, modelID string, step int64) (storage.Checkpoint, error) {
	cs, err := s.readCheckpoints(ctx, "model_id = {model:String} AND step = {step:Int64}", "",
		clickhouse.Named("model", modelID), clickhouse.Named("step", step))
	return storekit.First(cs, err, fmt.Sprintf("model %s has no checkpoint of step %d", modelID, step))
}

// DeleteCheckpoints implements storage.TrainingModelStore.
func (s *Store) DeleteCheckpoints(ctx context.Context, modelID string, steps []int64) ([]storage.Checkpoint, error) {
	if len(steps) == 0 {
		return []storage.Checkpoint{}, nil
	}
	gone, err := s.readCheckpoints(ctx, "model_id = {model:String} AND step IN {steps:Array(Int64)}", "",
		clickhouse.Named("model", modelID), clickhouse.Named("steps", steps))
	if err != nil {
		return nil, err
	}
	return gone, s.insertCheckpoints(ctx, gone, true)
}

func (s *Store) readCheckpoints(ctx context.Context, where, tail string, args ...any) ([]storage.Checkpoint, error) {
	out := []storage.Checkpoint{}
	err := s.eachRow(ctx, "read checkpoints", "SELECT "+storekit.CheckpointColumns+" FROM training_checkpoints FINAL WHERE "+
		where+" AND NOT deleted "+tail, func(rows driver.Rows) error {
		var c storage.Checkpoint
		var metrics string
		if err := rows.Scan(&c.ModelID, &c.ID, &c.Step, &c.Digest, &c.JobID, &metrics, &c.CreatedAt); err != nil {
			return err
		}
		var err error
		c.Metrics, err = storekit.DecodeMetrics(metrics)
		c.CreatedAt = c.CreatedAt.UTC()
		out = append(out, c)
		return err
	}, args...)
	return out, err
}

// AddLogEntry implements storage.TrainingModelStore.
func (s *Store) AddLogEntry(ctx context.Context, e storage.TrainingLogEntry) error {
	return s.insertBatch(ctx, "training_log_entries", storekit.LogEntryColumns+", version, deleted", 1, func(int) []any {
		return []any{e.ModelID, e.ID, e.Step, e.Split, string(e.Groups), storekit.EncodeLogStats(e.Stats), e.CreatedAt.UTC(),
			s.versions.next(0), flag(false)}
	})
}

// LogStats implements storage.TrainingModelStore.
func (s *Store) LogStats(ctx context.Context, modelID string, steps []int64) (map[int64]map[string]storage.LogStats, error) {
	out := storekit.LogStatsCollector{}
	if len(steps) == 0 {
		return out, nil
	}
	err := s.eachRow(ctx, "read log stats", "SELECT step, split, stats FROM training_log_entries FINAL "+
		"WHERE model_id = {model:String} AND step IN {steps:Array(Int64)} AND NOT deleted", func(rows driver.Rows) error {
		var step int64
		var split, stats string
		if err := rows.Scan(&step, &split, &stats); err != nil {
			return err
		}
		return out.Add(step, split, stats)
	}, clickhouse.Named("model", modelID), clickhouse.Named("steps", steps))
	return out, err
}
