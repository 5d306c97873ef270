package training

import (
	"context"
	"fmt"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/protocol"
)

// Lease waits up to wait (capped by training.max_lease_wait) for a job of
// the worker's entity and leases it; nil when none came.
func (s *Service) Lease(ctx context.Context, p auth.Principal, worker string, wait time.Duration) (*protocol.Lease, error) {
	if err := p.AuthorizeEntity(p.Entity, auth.Work); err != nil {
		return nil, err
	}
	if worker == "" || len(worker) > 256 {
		return nil, invalid("worker", "name the worker (1-256 characters), e.g. its host and GPU")
	}
	entity := p.Entity
	if entity == auth.AllEntities {
		entity = jobs.AnyEntity
	}
	timer := time.NewTimer(min(max(wait, 0), s.d.Config.MaxLeaseWait))
	defer timer.Stop()
	for {
		wake := s.d.Queue.Wake()
		r, err := s.d.Queue.Submit(ctx, jobs.Command{Kind: jobs.KindLease, Entity: entity, Worker: worker, TTL: s.d.Config.LeaseTTL})
		if err != nil {
			return nil, err
		}
		if r.Granted {
			return s.leaseAnswer(ctx, r.Job)
		}
		select {
		case <-wake:
		case <-timer.C:
			return nil, nil
		case <-s.stopping:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// leaseAnswer is what the worker of a just leased job needs.
func (s *Service) leaseAnswer(ctx context.Context, j storage.TrainingJob) (*protocol.Lease, error) {
	m, err := s.d.Store.GetTrainingModel(ctx, auth.AllEntities, j.ModelID)
	if err != nil {
		return nil, fmt.Errorf("the leased job's model: %w", err)
	}
	in, err := s.d.Store.GetJobInput(ctx, j.ProjectID, j.ID)
	if err != nil {
		return nil, err
	}
	prev, err := s.previousCheckpoint(ctx, m, j.TargetStep)
	if err != nil {
		return nil, err
	}
	entity, project := SplitProject(m.ProjectID)
	return &protocol.Lease{LeaseID: j.LeaseID, LeaseUntil: *j.LeaseUntil, LeaseSeconds: s.d.Config.LeaseTTL.Seconds(),
		HeartbeatSeconds:   s.d.Config.HeartbeatInterval().Seconds(),
		Job:                protocol.Job{ID: j.ID, Kind: j.Kind, Attempt: j.Attempts, TargetStep: j.TargetStep, CreatedAt: j.CreatedAt},
		Model:              protocol.Model{ID: m.ID, Entity: entity, Project: project, Name: m.Name, BaseModel: m.BaseModel},
		PreviousCheckpoint: prev, Input: in.Body}, nil
}

// previousCheckpoint is the model's latest checkpoint below step.
func (s *Service) previousCheckpoint(ctx context.Context, m storage.TrainingModel, step int64) (*protocol.Checkpoint, error) {
	cs, _, err := s.d.Store.ListCheckpoints(ctx, storage.CheckpointPage{ModelID: m.ID, Descending: true, Limit: 100})
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if c.Step < step {
			return s.describe(ctx, m, c)
		}
	}
	return nil, nil
}

// describe is a stored checkpoint with its files.
func (s *Service) describe(ctx context.Context, m storage.TrainingModel, c storage.Checkpoint) (*protocol.Checkpoint, error) {
	v, err := s.readCheckpointValue(ctx, m, c.Digest)
	if err != nil {
		return nil, err
	}
	return &protocol.Checkpoint{ID: c.ID, Step: c.Step, Artifact: ArtifactName(m, c.Step), Metrics: c.Metrics, Files: v.Files}, nil
}

// held submits a command under the worker's lease on its job.
func (s *Service) held(ctx context.Context, p auth.Principal, cmd jobs.Command) (storage.TrainingJob, jobs.Result, error) {
	j, err := s.job(ctx, p, cmd.JobID, auth.Work)
	if err != nil {
		return j, jobs.Result{}, err
	}
	if cmd.LeaseID == "" {
		return j, jobs.Result{}, invalid(protocol.LeaseHeader, "header missing: send the lease_id the lease answered")
	}
	r, err := s.d.Queue.Submit(ctx, cmd)
	if err == nil && r.Refusal != nil {
		err = refused(r.Refusal)
	}
	return j, r, err
}

// Heartbeat extends the worker's lease and says whether the job's
// cancel was asked for.
func (s *Service) Heartbeat(ctx context.Context, p auth.Principal, jobID, leaseID string) (protocol.HeartbeatAnswer, error) {
	_, r, err := s.held(ctx, p, jobs.Command{Kind: jobs.KindHeartbeat, JobID: jobID, LeaseID: leaseID, TTL: s.d.Config.LeaseTTL})
	if err != nil {
		return protocol.HeartbeatAnswer{}, err
	}
	return protocol.HeartbeatAnswer{LeaseUntil: *r.Job.LeaseUntil, CancelRequested: r.Job.CancelRequested}, nil
}

// AppendEvents adds progress events under the worker's lease; numbers
// already applied are skipped.
func (s *Service) AppendEvents(ctx context.Context, p auth.Principal, jobID, leaseID string, batch protocol.Events) (int, error) {
	evs, err := checkEvents(batch)
	if err != nil {
		return 0, err
	}
	_, r, err := s.held(ctx, p, jobs.Command{Kind: jobs.KindAppend, JobID: jobID, LeaseID: leaseID, From: batch.Seq, Events: evs})
	return len(r.Changes.Events), err
}

// Finish ends the job under the worker's lease. Finishing again the
// same way with the same lease (a retry after a lost answer) answers the
// same; any other finish of an ended job is refused.
func (s *Service) Finish(ctx context.Context, p auth.Principal, jobID, leaseID string, f protocol.Finish) (storage.TrainingJob, error) {
	if f.Status != jobs.OutcomeSucceeded && f.Status != jobs.OutcomeFailed && f.Status != jobs.OutcomeCancelled {
		return storage.TrainingJob{}, schema("must be one of succeeded, failed, cancelled", "literal_error", "status")
	}
	if len(f.ErrorMessage) > 64<<10 {
		return storage.TrainingJob{}, schema("must be at most 65536 bytes", "string_too_long", "error_message")
	}
	j, r, err := s.held(ctx, p, jobs.Command{Kind: jobs.KindFinish, JobID: jobID, LeaseID: leaseID, Outcome: f.Status, ErrorMessage: f.ErrorMessage})
	if err == nil {
		return r.Job, nil
	}
	if r.Refusal == nil || r.Refusal.Code != jobs.NotOpen {
		return j, err
	}
	ended, gerr := s.d.Store.GetTrainingJob(ctx, auth.AllEntities, j.ID)
	switch {
	case gerr != nil:
		return j, gerr
	case ended.LeaseID == leaseID && (ended.Status == f.Status || ended.Status == storage.JobCancelled):
		return ended, nil
	}
	return ended, fmt.Errorf("training job %s has already ended (%s); it cannot be finished again: %w", j.ID, ended.Status, storage.ErrConflict)
}
