package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// PutJobInput implements storage.TrainingJobStore.
func (s *Store) PutJobInput(ctx context.Context, in storage.JobInput) error {
	return s.insertBatch(ctx, "training_job_inputs", "job_id, project_id, body", 1, func(int) []any {
		return []any{in.JobID, in.ProjectID, string(in.Body)}
	})
}

// GetJobInput implements storage.TrainingJobStore.
func (s *Store) GetJobInput(ctx context.Context, projectID, jobID string) (storage.JobInput, error) {
	bodies, err := s.stringColumn(ctx, "read job input", "SELECT body FROM training_job_inputs FINAL "+
		"WHERE job_id = {job:String} AND project_id = {project:String}", clickhouse.Named("job", jobID), clickhouse.Named("project", projectID))
	body, err := storekit.First(bodies, err, fmt.Sprintf("training job %s has no stored input", jobID))
	return storage.JobInput{JobID: jobID, ProjectID: projectID, Body: []byte(body)}, err
}

// SaveTrainingJobs implements storage.TrainingJobStore: job rows carry
// their own version, so the ReplacingMergeTree keeps the newest state
// whatever order writers' inserts land in.
func (s *Store) SaveTrainingJobs(ctx context.Context, jobs []storage.TrainingJob, events []storage.TrainingEvent) error {
	// Events first: a reader that sees a job's state sees the events it
	// counts.
	if err := s.insertBatch(ctx, "training_job_events", storekit.TrainingEventColumns, len(events), func(i int) []any {
		e := events[i]
		return []any{e.JobID, e.Seq, e.ID, e.Type, string(e.Data), e.CreatedAt.UTC()}
	}); err != nil {
		return err
	}
	return s.insertBatch(ctx, "training_jobs", storekit.TrainingJobColumns+", entity", len(jobs), func(i int) []any {
		j := jobs[i]
		return []any{j.ID, j.ProjectID, j.ModelID, j.Kind, j.Status, int32(j.Attempts), int32(j.MaxAttempts), j.TargetStep,
			j.CheckpointStep, j.LeaseID, j.Worker, utcPtr(j.LeaseUntil), j.LeaseAck, j.LastSeq, j.CancelRequested,
			j.ErrorMessage, j.CreatedAt.UTC(), j.QueuedAt.UTC(), utcPtr(j.TrainingStart), utcPtr(j.TrainingEnd), j.Version,
			storekit.EntityOf(j.ProjectID)}
	})
}

// GetTrainingJob implements storage.TrainingJobStore.
func (s *Store) GetTrainingJob(ctx context.Context, entity, id string) (storage.TrainingJob, error) {
	where, args := "id = {id:String}", []any{clickhouse.Named("id", id)}
	if entity != storekit.AllEntities {
		where, args = where+" AND entity = {entity:String}", append(args, clickhouse.Named("entity", entity))
	}
	js, err := s.trainingJobs(ctx, where, args...)
	return storekit.First(js, err, fmt.Sprintf("training job %q does not exist", id))
}

// OpenTrainingJobs implements storage.TrainingJobStore.
func (s *Store) OpenTrainingJobs(ctx context.Context) ([]storage.TrainingJob, int64, error) {
	var top int64
	if err := s.eachRow(ctx, "job versions", "SELECT max(version) FROM training_jobs", func(rows driver.Rows) error {
		return rows.Scan(&top)
	}); err != nil {
		return nil, 0, err
	}
	js, err := s.trainingJobs(ctx, "status IN ('queued', 'running') ORDER BY queued_at, id")
	return js, top, err
}

// CountOpenJobs implements storage.TrainingJobStore.
func (s *Store) CountOpenJobs(ctx context.Context, modelID string) (int64, error) {
	var n uint64
	err := s.eachRow(ctx, "count open jobs", "SELECT count() FROM training_jobs FINAL WHERE model_id = {model:String} "+
		"AND status IN ('queued', 'running')", func(rows driver.Rows) error { return rows.Scan(&n) }, clickhouse.Named("model", modelID))
	return int64(n), err
}

func (s *Store) trainingJobs(ctx context.Context, where string, args ...any) ([]storage.TrainingJob, error) {
	out := []storage.TrainingJob{}
	err := s.eachRow(ctx, "read training jobs", "SELECT "+storekit.TrainingJobColumns+" FROM training_jobs FINAL WHERE "+where,
		func(rows driver.Rows) error {
			var j storage.TrainingJob
			var attempts, maxAttempts int32
			err := rows.Scan(&j.ID, &j.ProjectID, &j.ModelID, &j.Kind, &j.Status, &attempts, &maxAttempts, &j.TargetStep,
				&j.CheckpointStep, &j.LeaseID, &j.Worker, &j.LeaseUntil, &j.LeaseAck, &j.LastSeq, &j.CancelRequested,
				&j.ErrorMessage, &j.CreatedAt, &j.QueuedAt, &j.TrainingStart, &j.TrainingEnd, &j.Version)
			j.Attempts, j.MaxAttempts = int(attempts), int(maxAttempts)
			j.CreatedAt, j.QueuedAt = j.CreatedAt.UTC(), j.QueuedAt.UTC()
			j.LeaseUntil, j.TrainingStart, j.TrainingEnd = utcPtr(j.LeaseUntil), utcPtr(j.TrainingStart), utcPtr(j.TrainingEnd)
			out = append(out, j)
			return err
		}, args...)
	return out, err
}

// ListTrainingEvents implements storage.TrainingJobStore.
func (s *Store) ListTrainingEvents(ctx context.Context, jobID string, afterSeq int64, limit int) ([]storage.TrainingEvent, bool, error) {
	out := []storage.TrainingEvent{}
	err := s.eachRow(ctx, "read training events", "SELECT "+storekit.TrainingEventColumns+" FROM training_job_events FINAL "+
		"WHERE job_id = {job:String} AND seq > {after:Int64} ORDER BY seq LIMIT {limit:UInt32}", func(rows driver.Rows) error {
		var e storage.TrainingEvent
		var data string
		err := rows.Scan(&e.JobID, &e.Seq, &e.ID, &e.Type, &data, &e.CreatedAt)
		e.Data, e.CreatedAt = []byte(data), e.CreatedAt.UTC()
		out = append(out, e)
		return err
	}, clickhouse.Named("job", jobID), clickhouse.Named("after", afterSeq), clickhouse.Named("limit", uint32(limit+1)))
	page, more := storekit.PageOf(out, limit)
	return page, more, err
}

// TrainingEventSeq implements storage.TrainingJobStore.
func (s *Store) TrainingEventSeq(ctx context.Context, jobID, eventID string) (int64, error) {
	var seqs []int64
	err := s.eachRow(ctx, "read event cursor", "SELECT seq FROM training_job_events WHERE job_id = {job:String} AND id = {id:String} LIMIT 1",
		func(rows driver.Rows) error {
			var seq int64
			err := rows.Scan(&seq)
			seqs = append(seqs, seq)
			return err
		}, clickhouse.Named("job", jobID), clickhouse.Named("id", eventID))
	if err == nil && len(seqs) == 0 {
		return 0, storekit.NoEvent(jobID, eventID)
	}
	if err != nil {
		return 0, err
	}
	return seqs[0], nil
}

// SaveQueueSnapshot implements storage.TrainingJobStore.
func (s *Store) SaveQueueSnapshot(ctx context.Context, snap storage.QueueSnapshot) error {
	return s.insertBatch(ctx, "training_queue_snapshots", "slot, log_pos, state, created_at", 1, func(int) []any {
		return []any{uint8(0), snap.Position, string(snap.State), snap.CreatedAt.UTC()}
	})
}

// LatestQueueSnapshot implements storage.TrainingJobStore.
func (s *Store) LatestQueueSnapshot(ctx context.Context) (storage.QueueSnapshot, error) {
	var snaps []storage.QueueSnapshot
	err := s.eachRow(ctx, "read queue snapshot", "SELECT log_pos, state, created_at FROM training_queue_snapshots FINAL "+
		"ORDER BY log_pos DESC LIMIT 1", func(rows driver.Rows) error {
		var snap storage.QueueSnapshot
		var state string
		err := rows.Scan(&snap.Position, &state, &snap.CreatedAt)
		snap.State, snap.CreatedAt = []byte(state), snap.CreatedAt.UTC()
		snaps = append(snaps, snap)
		return err
	})
	return storekit.First(snaps, err, "no job queue snapshot")
}

// PingTraining implements storage.TrainingJobStore.
func (s *Store) PingTraining(ctx context.Context) error {
	_, err := s.stringColumn(ctx, "ping training tables", "SELECT id FROM training_models LIMIT 1")
	if err != nil {
		return fmt.Errorf("training tables: %w: %w", storage.ErrUnavailable, err)
	}
	return nil
}
