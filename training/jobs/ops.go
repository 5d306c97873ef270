package jobs

import (
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
)

// create queues a job. Its target step is one past the model's latest
// checkpoint and past every open job of the model, so jobs queued back
// to back produce consecutive steps. Creating an id twice is a no-op.
func (m *Machine) create(cmd Command) Result {
	if j, ok := m.jobs[cmd.JobID]; ok {
		return Result{Job: *j}
	}
	if slices.Contains(m.closed, cmd.JobID) {
		return refuse(NotOpen, "training job %s has ended", cmd.JobID)
	}
	target := cmd.LatestStep
	for _, j := range m.jobs {
		if j.ModelID == cmd.ModelID {
			target = max(target, j.TargetStep)
		}
	}
	m.touch(cmd.JobID)
	j := &storage.TrainingJob{ID: cmd.JobID, ProjectID: cmd.ProjectID, ModelID: cmd.ModelID, Kind: cmd.JobKind,
		Status: storage.JobQueued, MaxAttempts: max(cmd.MaxAttempts, 1), TargetStep: target + 1,
		CreatedAt: cmd.At.UTC(), QueuedAt: m.now}
	m.jobs[j.ID] = j
	m.enqueue(j)
	return Result{Job: *j, Changes: Changes{Jobs: []storage.TrainingJob{m.changed(j)}}}
}

// lease hands the oldest queued job the worker may take to it, after
// re-queueing jobs whose leases ended.
func (m *Machine) lease(cmd Command) Result {
	// A lease command delivered twice (a producer's retry) grants once.
	for _, j := range m.jobs {
		if j.Status == storage.JobRunning && j.LeaseID == cmd.ID {
			return Result{Job: *j, Granted: true}
		}
	}
	changes := m.expire()
	j := m.oldestQueued(cmd.Entity)
	if j == nil {
		return Result{Changes: changes}
	}
	m.touch(j.ID)
	until := m.now.Add(cmd.TTL)
	j.Status, j.LeaseID, j.Worker, j.LeaseUntil, j.LeaseAck = storage.JobRunning, cmd.ID, cmd.Worker, &until, 0
	j.Attempts++
	if j.TrainingStart == nil {
		start := m.now
		j.TrainingStart = &start
	}
	changes.Jobs = append(changes.Jobs, m.changed(j))
	return Result{Job: *j, Granted: true, Changes: changes}
}

// heartbeat extends a valid lease by TTL from now.
func (m *Machine) heartbeat(cmd Command) Result {
	j, r := m.held(cmd.JobID, cmd.LeaseID)
	if r != nil {
		return *r
	}
	until := m.now.Add(cmd.TTL)
	j.LeaseUntil = &until
	return Result{Job: *j, Changes: Changes{Jobs: []storage.TrainingJob{m.changed(j)}}}
}

// appendEvents adds the progress events the lease has not applied yet.
func (m *Machine) appendEvents(cmd Command) Result {
	j, r := m.held(cmd.JobID, cmd.LeaseID)
	if r != nil {
		return *r
	}
	var ch Changes
	for i, e := range cmd.Events {
		if n := cmd.From + int64(i); n > j.LeaseAck {
			ch.Events = append(ch.Events, m.event(j, e))
			j.LeaseAck = n
		}
	}
	if len(ch.Events) > 0 {
		ch.Jobs = []storage.TrainingJob{m.changed(j)}
	}
	return Result{Job: *j, Changes: ch}
}

// checkpoint checks a checkpoint's step under a valid lease, and once
// the checkpoint is stored (Record) remembers it for finish.
func (m *Machine) checkpoint(cmd Command) Result {
	j, r := m.held(cmd.JobID, cmd.LeaseID)
	if r != nil {
		return *r
	}
	if cmd.Step < j.TargetStep {
		return refuse(Invalid, "step: %d is below the step this job trains (%d); register step %d", cmd.Step, j.TargetStep, j.TargetStep)
	}
	if !cmd.Record {
		return Result{Job: *j}
	}
	j.CheckpointStep = max(j.CheckpointStep, cmd.Step)
	return Result{Job: *j, Changes: Changes{Jobs: []storage.TrainingJob{m.changed(j)}}}
}

// finish ends a job under its valid lease. A job whose cancel was asked
// for ends cancelled whatever the outcome; success needs the job's
// checkpoint.
func (m *Machine) finish(cmd Command) Result {
	j, r := m.held(cmd.JobID, cmd.LeaseID)
	if r != nil {
		return *r
	}
	status, msg := cmd.Outcome, cmd.ErrorMessage
	switch {
	case j.CancelRequested:
		status, msg = storage.JobCancelled, CancelledMessage
	case status == OutcomeSucceeded && j.CheckpointStep < j.TargetStep:
		return refuse(NotReady, "training job %s has no checkpoint of step %d yet; register it before finishing with succeeded", j.ID, j.TargetStep)
	case status == OutcomeFailed && msg == "":
		msg = "the worker reported a failure without a message"
	case status == OutcomeCancelled:
		msg = CancelledMessage
	case status != OutcomeSucceeded && status != OutcomeFailed:
		return refuse(Invalid, "outcome: %q is not one of succeeded, failed, cancelled", status)
	}
	ch := m.close(j, status, msg)
	return Result{Job: ch.Jobs[0], Changes: ch}
}

// cancel ends a queued job at once; a running one is marked and its
// worker learns it at its next heartbeat.
func (m *Machine) cancel(cmd Command) Result {
	j, r := m.open(cmd.JobID)
	if r != nil {
		return *r
	}
	if j.Status == storage.JobQueued {
		ch := m.close(j, storage.JobCancelled, CancelledMessage)
		return Result{Job: ch.Jobs[0], Changes: ch}
	}
	j.CancelRequested = true
	return Result{Job: *j, Changes: Changes{Jobs: []storage.TrainingJob{m.changed(j)}}}
}

// expire ends the leases whose time is over: the job is queued again, or
// with no attempt left (or a cancel asked for) it ends.
func (m *Machine) expire() Changes {
	var ended []string
	for id, j := range m.jobs {
		if j.Status == storage.JobRunning && j.LeaseUntil != nil && m.now.After(*j.LeaseUntil) {
			ended = append(ended, id)
		}
	}
	slices.Sort(ended) // map order must not decide the order of changes
	var ch Changes
	for _, id := range ended {
		j := m.jobs[id]
		m.touch(j.ID)
		switch {
		case j.CancelRequested:
			ch.Add(m.close(j, storage.JobCancelled, CancelledMessage))
		case j.Attempts >= j.MaxAttempts:
			ch.Add(m.close(j, storage.JobFailed, fmt.Sprintf(
				"the lease of worker %q ended without the job finishing, %d time(s) (the most allowed); the job was given up", j.Worker, j.Attempts)))
		default:
			j.Status, j.LeaseID, j.LeaseUntil, j.QueuedAt = storage.JobQueued, "", nil, m.now
			m.enqueue(j)
			ch.Jobs = append(ch.Jobs, m.changed(j))
		}
	}
	return ch
}
