package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// ListTrainingModels implements storage.TrainingModelStore.
func (s *Store) ListTrainingModels(ctx context.Context, projectID string) ([]storage.TrainingModel, error) {
	ms, err := s.trainingModels(ctx, "project_id = ? ORDER BY name LIMIT ?", projectID, storage.MaxTrainingModels)
	if ms == nil {
		ms = []storage.TrainingModel{}
	}
	return ms, err
}

// ListTrainingJobs implements storage.TrainingJobStore: newest first by
// creation time, then id, continuing strictly after the cursor's job.
func (s *Store) ListTrainingJobs(ctx context.Context, p storage.TrainingJobPage) ([]storage.TrainingJob, bool, error) {
	where, args := "project_id = ?", []any{p.ProjectID}
	if p.ModelID != "" {
		where, args = where+" AND model_id = ?", append(args, p.ModelID)
	}
	if p.AfterID != "" {
		var at time.Time
		err := s.db.QueryRowContext(ctx, `SELECT created_at FROM training_jobs WHERE project_id = ? AND id = ?`,
			p.ProjectID, p.AfterID).Scan(&at)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, storekit.NoJob(p)
		}
		if err != nil {
			return nil, false, fmt.Errorf("read training job cursor: %w", err)
		}
		where += " AND (created_at < ? OR (created_at = ? AND id < ?))"
		args = append(args, at, at, p.AfterID)
	}
	js, err := s.trainingJobs(ctx, where+" ORDER BY created_at DESC, id DESC LIMIT ?", append(args, p.Limit+1)...)
	if err != nil {
		return nil, false, err
	}
	page, more := storekit.PageOf(js, p.Limit)
	return page, more, nil
}
