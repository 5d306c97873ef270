package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// CreateTrainingModel implements storage.TrainingModelStore.
func (s *Store) CreateTrainingModel(ctx context.Context, m storage.TrainingModel) (storage.TrainingModel, bool, error) {
	created := false
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO training_models (`+storekit.TrainingModelColumns+`, entity)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			m.ID, m.ProjectID, m.Name, m.BaseModel, m.CreatedAt, storekit.EntityOf(m.ProjectID))
		if err != nil {
			return fmt.Errorf("create training model: %w", err)
		}
		n, err := res.RowsAffected()
		created = n == 1
		return err
	})
	if err != nil {
		return storage.TrainingModel{}, false, err
	}
	stored, err := s.FindTrainingModel(ctx, m.ProjectID, m.Name)
	return stored, created, err
}

// GetTrainingModel implements storage.TrainingModelStore.
func (s *Store) GetTrainingModel(ctx context.Context, entity, id string) (storage.TrainingModel, error) {
	where, args := "id = ?", []any{id}
	if entity != storekit.AllEntities {
		where, args = where+" AND entity = ?", append(args, entity)
	}
	ms, err := s.trainingModels(ctx, where, args...)
	return storekit.First(ms, err, fmt.Sprintf("model %q does not exist", id))
}

// FindTrainingModel implements storage.TrainingModelStore.
func (s *Store) FindTrainingModel(ctx context.Context, projectID, name string) (storage.TrainingModel, error) {
	ms, err := s.trainingModels(ctx, "project_id = ? AND name = ?", projectID, name)
	return storekit.First(ms, err, fmt.Sprintf("project %q has no model named %q", projectID, name))
}

func (s *Store) trainingModels(ctx context.Context, where string, args ...any) ([]storage.TrainingModel, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.TrainingModelColumns+` FROM training_models WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read training models: %w", err)
	}
	defer rows.Close()
	var out []storage.TrainingModel
	for rows.Next() {
		var m storage.TrainingModel
		if err := rows.Scan(&m.ID, &m.ProjectID, &m.Name, &m.BaseModel, &m.CreatedAt); err != nil {
			return nil, fmt.Errorf("read training models: %w", err)
		}
		m.CreatedAt = m.CreatedAt.UTC()
		out = append(out, m)
	}
	return out, rows.Err()
}

// DeleteTrainingModel implements storage.TrainingModelStore.
func (s *Store) DeleteTrainingModel(ctx context.Context, m storage.TrainingModel) ([]storage.Checkpoint, error) {
	var gone []storage.Checkpoint
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		if gone, err = scanCheckpoints(tx.QueryContext(ctx, `DELETE FROM training_checkpoints WHERE model_id = ?
			RETURNING `+storekit.CheckpointColumns, m.ID)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM training_log_entries WHERE model_id = ?`, m.ID); err != nil {
			return fmt.Errorf("delete log entries: %w", err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM training_models WHERE id = ?`, m.ID)
		return err
	})
	return gone, err
}

// PutCheckpoint implements storage.TrainingModelStore.
func (s *Store) PutCheckpoint(ctx context.Context, c storage.Checkpoint) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO training_checkpoints (`+storekit.CheckpointColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, c.ModelID, c.ID, c.Step, c.Digest, c.JobID, storekit.EncodeMetrics(c.Metrics), c.CreatedAt)
		if err != nil {
			return fmt.Errorf("store checkpoint: %w", err)
		}
		return nil
	})
}

// ListCheckpoints implements storage.TrainingModelStore.
func (s *Store) ListCheckpoints(ctx context.Context, p storage.CheckpointPage) ([]storage.Checkpoint, bool, error) {
	cmp, dir := storekit.CheckpointOrder(p)
	where, args := "model_id = ?", []any{p.ModelID}
	if p.AfterID != "" {
		var after int64
		err := s.db.QueryRowContext(ctx, `SELECT step FROM training_checkpoints WHERE model_id = ? AND id = ?`, p.ModelID, p.AfterID).Scan(&after)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, storekit.NoCheckpoint(p)
		}
		if err != nil {
			return nil, false, fmt.Errorf("read checkpoint cursor: %w", err)
		}
		where, args = where+" AND step "+cmp+" ?", append(args, after)
	}
	cs, err := scanCheckpoints(s.db.QueryContext(ctx, `SELECT `+storekit.CheckpointColumns+` FROM training_checkpoints
		WHERE `+where+` ORDER BY step `+dir+` LIMIT ?`, append(args, p.Limit+1)...))
	if err != nil {
		return nil, false, err
	}
	page, more := storekit.PageOf(cs, p.Limit)
	return page, more, nil
}

// GetCheckpoint implements storage.TrainingModelStore.
func (s *Store) GetCheckpoint(ctx context.Context, modelID string, step int64) (storage.Checkpoint, error) {
	cs, err := scanCheckpoints(s.db.QueryContext(ctx, `SELECT `+storekit.CheckpointColumns+` FROM training_checkpoints
		WHERE model_id = ? AND step = ?`, modelID, step))
	return storekit.First(cs, err, fmt.Sprintf("model %s has no checkpoint of step %d", modelID, step))
}

// DeleteCheckpoints implements storage.TrainingModelStore.
func (s *Store) DeleteCheckpoints(ctx context.Context, modelID string, steps []int64) ([]storage.Checkpoint, error) {
	if len(steps) == 0 {
		return []storage.Checkpoint{}, nil
	}
	args := []any{modelID}
	for _, st := range steps {
		args = append(args, st)
	}
	var gone []storage.Checkpoint
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		gone, err = scanCheckpoints(tx.QueryContext(ctx, `DELETE FROM training_checkpoints WHERE model_id = ?
			AND step IN (`+qmarks(len(steps))+`) RETURNING `+storekit.CheckpointColumns, args...))
		return err
	})
	return gone, err
}

// scanCheckpoints reads rows of storekit.CheckpointColumns and closes them.
func scanCheckpoints(rows *sql.Rows, err error) ([]storage.Checkpoint, error) {
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	out := []storage.Checkpoint{}
	for rows.Next() {
		var c storage.Checkpoint
		var metrics string
		if err := rows.Scan(&c.ModelID, &c.ID, &c.Step, &c.Digest, &c.JobID, &metrics, &c.CreatedAt); err != nil {
			return nil, fmt.Errorf("read checkpoints: %w", err)
		}
		if c.Metrics, err = storekit.DecodeMetrics(metrics); err != nil {
			return nil, err
		}
		c.CreatedAt = c.CreatedAt.UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// AddLogEntry implements storage.TrainingModelStore.
func (s *Store) AddLogEntry(ctx context.Context, e storage.TrainingLogEntry) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO training_log_entries (`+storekit.LogEntryColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			e.ModelID, e.ID, e.Step, e.Split, string(e.Groups), storekit.EncodeLogStats(e.Stats), e.CreatedAt)
		if err != nil {
			return fmt.Errorf("store log entry: %w", err)
		}
		return nil
	})
}

// LogStats implements storage.TrainingModelStore.
func (s *Store) LogStats(ctx context.Context, modelID string, steps []int64) (map[int64]map[string]storage.LogStats, error) {
	out := storekit.LogStatsCollector{}
	if len(steps) == 0 {
		return out, nil
	}
	args := []any{modelID}
	for _, st := range steps {
		args = append(args, st)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT step, split, stats FROM training_log_entries
		WHERE model_id = ? AND step IN (`+qmarks(len(steps))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read log stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var step int64
		var split, stats string
		if err := rows.Scan(&step, &split, &stats); err != nil {
			return nil, fmt.Errorf("read log stats: %w", err)
		}
		if err := out.Add(step, split, stats); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}
