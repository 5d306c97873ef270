package clickhouse

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// ListTrainingModels implements storage.TrainingModelStore.
func (s *Store) ListTrainingModels(ctx context.Context, projectID string) ([]storage.TrainingModel, error) {
	ms, err := s.trainingModels(ctx, "project_id = {project:String}", clickhouse.Named("project", projectID))
	if err != nil {
		return nil, err
	}
	if ms == nil {
		ms = []storage.TrainingModel{}
	}
	storekit.SortModels(ms)
	return ms[:min(len(ms), storage.MaxTrainingModels)], nil
}

// ListTrainingJobs implements storage.TrainingJobStore: newest first by
// creation time, then id, continuing strictly after the cursor's job.
func (s *Store) ListTrainingJobs(ctx context.Context, p storage.TrainingJobPage) ([]storage.TrainingJob, bool, error) {
	where := "project_id = {project:String}"
	args := []any{clickhouse.Named("project", p.ProjectID), clickhouse.Named("limit", uint32(p.Limit+1))}
	if p.ModelID != "" {
		where, args = where+" AND model_id = {model:String}", append(args, clickhouse.Named("model", p.ModelID))
	}
	if p.AfterID != "" {
		at, err := s.jobCreatedAt(ctx, p)
		if err != nil {
			return nil, false, err
		}
		where += " AND (created_at < {at:DateTime64(6, 'UTC')} OR (created_at = {at:DateTime64(6, 'UTC')} AND id < {after:String}))"
		args = append(args, clickhouse.Named("at", at), clickhouse.Named("after", p.AfterID))
	}
	js, err := s.trainingJobs(ctx, where+" ORDER BY created_at DESC, id DESC LIMIT {limit:UInt32}", args...)
	if err != nil {
		return nil, false, err
	}
	page, more := storekit.PageOf(js, p.Limit)
	return page, more, nil
}

// jobCreatedAt is the creation time of the page cursor's job.
func (s *Store) jobCreatedAt(ctx context.Context, p storage.TrainingJobPage) (time.Time, error) {
	var found []time.Time
	err := s.eachRow(ctx, "read training job cursor", "SELECT created_at FROM training_jobs "+
		"WHERE project_id = {project:String} AND id = {id:String} LIMIT 1", func(rows driver.Rows) error {
		var at time.Time
		err := rows.Scan(&at)
		found = append(found, at)
		return err
	}, clickhouse.Named("project", p.ProjectID), clickhouse.Named("id", p.AfterID))
	if err == nil && len(found) == 0 {
		return time.Time{}, storekit.NoJob(p)
	}
	if err != nil {
		return time.Time{}, err
	}
	return found[0], nil
}
