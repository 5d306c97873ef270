package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// PutJobInput implements storage.TrainingJobStore.
func (s *Store) PutJobInput(ctx context.Context, in storage.JobInput) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO training_job_inputs (job_id, project_id, body) VALUES (?, ?, ?)`,
			in.JobID, in.ProjectID, string(in.Body))
		if err != nil {
			return fmt.Errorf("store job input: %w", err)
		}
		return nil
	})
}

// GetJobInput implements storage.TrainingJobStore.
func (s *Store) GetJobInput(ctx context.Context, projectID, jobID string) (storage.JobInput, error) {
	in := storage.JobInput{JobID: jobID, ProjectID: projectID}
	var body string
	err := s.db.QueryRowContext(ctx, `SELECT body FROM training_job_inputs WHERE project_id = ? AND job_id = ?`,
		projectID, jobID).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return in, fmt.Errorf("training job %s has no stored input: %w", jobID, storage.ErrNotFound)
	}
	in.Body = []byte(body)
	return in, err
}

// SaveTrainingJobs implements storage.TrainingJobStore in one
// transaction: a row replaces the stored one only with a higher version.
func (s *Store) SaveTrainingJobs(ctx context.Context, jobs []storage.TrainingJob, events []storage.TrainingEvent) error {
	if len(jobs) == 0 && len(events) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		for _, j := range jobs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO training_jobs (`+storekit.TrainingJobColumns+`, entity)
				VALUES (`+qmarks(22)+`) ON CONFLICT (id) DO UPDATE SET status = excluded.status,
				attempts = excluded.attempts, target_step = excluded.target_step, checkpoint_step = excluded.checkpoint_step,
				lease_id = excluded.lease_id, worker = excluded.worker, lease_until = excluded.lease_until,
				lease_ack = excluded.lease_ack, last_seq = excluded.last_seq, cancel_requested = excluded.cancel_requested,
				error_message = excluded.error_message, queued_at = excluded.queued_at,
				training_start = excluded.training_start, training_end = excluded.training_end, version = excluded.version
				WHERE excluded.version > training_jobs.version`, jobArgs(j)...); err != nil {
				return fmt.Errorf("save training job %s: %w", j.ID, err)
			}
		}
		for chunk := range slices.Chunk(events, deliveryChunk) {
			args := make([]any, 0, len(chunk)*6)
			for _, e := range chunk {
				args = append(args, e.JobID, e.Seq, e.ID, e.Type, string(e.Data), e.CreatedAt)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO training_job_events (`+storekit.TrainingEventColumns+`) VALUES `+
				rowsOf("("+qmarks(6)+")", len(chunk))+` ON CONFLICT DO NOTHING`, args...); err != nil {
				return fmt.Errorf("save training events: %w", err)
			}
		}
		return nil
	})
}

func jobArgs(j storage.TrainingJob) []any {
	return []any{j.ID, j.ProjectID, j.ModelID, j.Kind, j.Status, j.Attempts, j.MaxAttempts, j.TargetStep,
		j.CheckpointStep, j.LeaseID, j.Worker, nullTimePtr(j.LeaseUntil), j.LeaseAck, j.LastSeq, j.CancelRequested,
		j.ErrorMessage, j.CreatedAt, j.QueuedAt, nullTimePtr(j.TrainingStart), nullTimePtr(j.TrainingEnd), j.Version,
		storekit.EntityOf(j.ProjectID)}
}

// GetTrainingJob implements storage.TrainingJobStore.
func (s *Store) GetTrainingJob(ctx context.Context, entity, id string) (storage.TrainingJob, error) {
	where, args := "id = ?", []any{id}
	if entity != storekit.AllEntities {
		where, args = where+" AND entity = ?", append(args, entity)
	}
	js, err := s.trainingJobs(ctx, where, args...)
	return storekit.First(js, err, fmt.Sprintf("training job %q does not exist", id))
}

// OpenTrainingJobs implements storage.TrainingJobStore.
func (s *Store) OpenTrainingJobs(ctx context.Context) ([]storage.TrainingJob, int64, error) {
	var top int64
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM training_jobs`).Scan(&top); err != nil {
		return nil, 0, fmt.Errorf("read job versions: %w", err)
	}
	js, err := s.trainingJobs(ctx, "status IN (?, ?) ORDER BY queued_at, id", storage.JobQueued, storage.JobRunning)
	return js, top, err
}

// CountOpenJobs implements storage.TrainingJobStore.
func (s *Store) CountOpenJobs(ctx context.Context, modelID string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM training_jobs WHERE model_id = ? AND status IN (?, ?)`,
		modelID, storage.JobQueued, storage.JobRunning).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count open jobs: %w", err)
	}
	return n, nil
}

func (s *Store) trainingJobs(ctx context.Context, where string, args ...any) ([]storage.TrainingJob, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.TrainingJobColumns+` FROM training_jobs WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read training jobs: %w", err)
	}
	defer rows.Close()
	out := []storage.TrainingJob{}
	for rows.Next() {
		var j storage.TrainingJob
		var until, start, end sql.NullTime
		if err := rows.Scan(&j.ID, &j.ProjectID, &j.ModelID, &j.Kind, &j.Status, &j.Attempts, &j.MaxAttempts,
			&j.TargetStep, &j.CheckpointStep, &j.LeaseID, &j.Worker, &until, &j.LeaseAck, &j.LastSeq,
			&j.CancelRequested, &j.ErrorMessage, &j.CreatedAt, &j.QueuedAt, &start, &end, &j.Version); err != nil {
			return nil, fmt.Errorf("read training jobs: %w", err)
		}
		j.LeaseUntil, j.TrainingStart, j.TrainingEnd = timePtr(until), timePtr(start), timePtr(end)
		j.CreatedAt, j.QueuedAt = j.CreatedAt.UTC(), j.QueuedAt.UTC()
		out = append(out, j)
	}
	return out, rows.Err()
}

// ListTrainingEvents implements storage.TrainingJobStore.
func (s *Store) ListTrainingEvents(ctx context.Context, jobID string, afterSeq int64, limit int) ([]storage.TrainingEvent, bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.TrainingEventColumns+` FROM training_job_events
		WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?`, jobID, afterSeq, limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("read training events: %w", err)
	}
	defer rows.Close()
	out := []storage.TrainingEvent{}
	for rows.Next() {
		var e storage.TrainingEvent
		var data string
		if err := rows.Scan(&e.JobID, &e.Seq, &e.ID, &e.Type, &data, &e.CreatedAt); err != nil {
			return nil, false, fmt.Errorf("read training events: %w", err)
		}
		e.Data, e.CreatedAt = []byte(data), e.CreatedAt.UTC()
		out = append(out, e)
	}
	page, more := storekit.PageOf(out, limit)
	return page, more, rows.Err()
}

// TrainingEventSeq implements storage.TrainingJobStore.
func (s *Store) TrainingEventSeq(ctx context.Context, jobID, eventID string) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT seq FROM training_job_events WHERE job_id = ? AND id = ?`, jobID, eventID).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, storekit.NoEvent(jobID, eventID)
	}
	return seq, err
}

// SaveQueueSnapshot implements storage.TrainingJobStore.
func (s *Store) SaveQueueSnapshot(ctx context.Context, snap storage.QueueSnapshot) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO training_queue_snapshots (position, state, created_at) VALUES (?, ?, ?)`,
			snap.Position, snap.State, snap.CreatedAt)
		return err
	})
}

// LatestQueueSnapshot implements storage.TrainingJobStore.
func (s *Store) LatestQueueSnapshot(ctx context.Context) (storage.QueueSnapshot, error) {
	var snap storage.QueueSnapshot
	err := s.db.QueryRowContext(ctx, `SELECT position, state, created_at FROM training_queue_snapshots
		ORDER BY position DESC LIMIT 1`).Scan(&snap.Position, &snap.State, &snap.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return snap, fmt.Errorf("no job queue snapshot: %w", storage.ErrNotFound)
	}
	snap.CreatedAt = snap.CreatedAt.UTC()
	return snap, err
}

// PingTraining implements storage.TrainingJobStore.
func (s *Store) PingTraining(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM training_models LIMIT 1`)
	if err == nil {
		err = rows.Close()
	}
	if err != nil {
		return fmt.Errorf("training tables: %w: %w", storage.ErrUnavailable, err)
	}
	return nil
}
