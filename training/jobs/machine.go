// Package jobs is the training job queue as a deterministic state
// machine. Commands (create, lease, heartbeat, append, checkpoint,
// finish, cancel, tick) are applied one at a time in a total order; the
// machine keeps the open (queued and running) jobs in memory and answers
// each command with a result and the job rows and events to store. It
// reads no clock, no storage and no randomness, so every replica that
// applies the same commands in the same order holds the same state and
// gives the same answers: that is what lets the scale-out queue use a
// Kafka partition's order as its only arbiter (see
// docs/adr/0014-training-job-queue.md).
//
// Rules it keeps: a job has at most one valid lease; a lease is valid
// until its time ends or it is superseded; events are append-only with
// stable ids; every job gets exactly one terminal event.
//
// It must never import HTTP, storage backends or Kafka.
package jobs

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

// Machine is the queue's state. It is not safe for concurrent use: a
// sequencer applies commands one at a time.
type Machine struct {
	jobs   map[string]*storage.TrainingJob
	queues map[string]*fifo // entity -> queued jobs, oldest first
	now    time.Time
	pos    int64
	// closed remembers the ids of the jobs that ended last, oldest
	// first, so a create delivered twice cannot queue an ended job again.
	closed []string
	// undo holds the state touched since the last Commit, for Rollback;
	// nil when not recording.
	undo *undoLog
}

// New returns an empty machine.
func New() *Machine {
	return &Machine{jobs: map[string]*storage.TrainingJob{}, queues: map[string]*fifo{}}
}

// Restore returns a machine holding the open jobs given, after the
// command at pos, with its clock at now, remembering the ended jobs in
// closed.
func Restore(open []storage.TrainingJob, closed []string, pos int64, now time.Time) *Machine {
	m := New()
	m.pos, m.now, m.closed = pos, now, closed
	for _, j := range open {
		if j.Open() {
			jc := j
			m.jobs[j.ID] = &jc
		}
	}
	m.rebuildQueues()
	return m
}

// Position is the position of the last command applied.
func (m *Machine) Position() int64 { return m.pos }

// Open returns copies of the open jobs, sorted by id.
func (m *Machine) Open() []storage.TrainingJob {
	out := make([]storage.TrainingJob, 0, len(m.jobs))
	for _, id := range m.sortedIDs() {
		out = append(out, *m.jobs[id])
	}
	return out
}

// Job returns a copy of an open job.
func (m *Machine) Job(id string) (storage.TrainingJob, bool) {
	j, ok := m.jobs[id]
	if !ok {
		return storage.TrainingJob{}, false
	}
	return *j, true
}

// Queued counts the queued jobs an entity's worker could lease ("*":
// any entity's).
func (m *Machine) Queued(entity string) int {
	return m.count(func(j *storage.TrainingJob) bool {
		return j.Status == storage.JobQueued && (entity == AnyEntity || entityOf(j.ProjectID) == entity)
	})
}

// Running counts the running jobs.
func (m *Machine) Running() int {
	return m.count(func(j *storage.TrainingJob) bool { return j.Status == storage.JobRunning })
}

func (m *Machine) count(match func(*storage.TrainingJob) bool) int {
	n := 0
	for _, j := range m.jobs {
		if match(j) {
			n++
		}
	}
	return n
}

// EarliestLeaseEnd is when the first running lease ends.
func (m *Machine) EarliestLeaseEnd() (time.Time, bool) {
	var first time.Time
	for _, j := range m.jobs {
		if j.Status == storage.JobRunning && j.LeaseUntil != nil && (first.IsZero() || j.LeaseUntil.Before(first)) {
			first = *j.LeaseUntil
		}
	}
	return first, !first.IsZero()
}

// AnyEntity is the lease scope of a worker that serves every entity.
const AnyEntity = "*"

// Apply applies cmd at position pos (greater than every earlier one).
func (m *Machine) Apply(pos int64, cmd Command) Result {
	m.remember()
	m.pos = pos
	if cmd.At.After(m.now) {
		m.now = cmd.At.UTC()
	}
	switch cmd.Kind {
	case KindCreate:
		return m.create(cmd)
	case KindLease:
		return m.lease(cmd)
	case KindHeartbeat:
		return m.heartbeat(cmd)
	case KindAppend:
		return m.appendEvents(cmd)
	case KindCheckpoint:
		return m.checkpoint(cmd)
	case KindFinish:
		return m.finish(cmd)
	case KindCancel:
		return m.cancel(cmd)
	case KindTick:
		return Result{Changes: m.expire()}
	case KindPing:
		return Result{}
	}
	return refuse(Invalid, "unknown command kind %q", cmd.Kind)
}

func refuse(code Code, format string, args ...any) Result {
	return Result{Refusal: &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// open returns the open job id, or the refusal for one that is not.
func (m *Machine) open(id string) (*storage.TrainingJob, *Result) {
	j, ok := m.jobs[id]
	if !ok {
		r := refuse(NotOpen, "training job %s is not queued or running", id)
		return nil, &r
	}
	m.touch(j.ID)
	return j, nil
}

// held returns the running job whose valid lease is leaseID.
func (m *Machine) held(id, leaseID string) (*storage.TrainingJob, *Result) {
	j, r := m.open(id)
	if r != nil {
		return nil, r
	}
	switch {
	case j.Status != storage.JobRunning || j.LeaseID != leaseID:
		r := refuse(LeaseLost, "lease %s does not hold training job %s (it ended, or the job was leased again); stop working on it", leaseID, id)
		return nil, &r
	case j.LeaseUntil == nil || m.now.After(*j.LeaseUntil):
		r := refuse(LeaseLost, "the lease on training job %s ended at %s; stop working on it", id, j.LeaseUntil.Format(time.RFC3339Nano))
		return nil, &r
	}
	return j, nil
}

// changed records j's row with the current version.
func (m *Machine) changed(j *storage.TrainingJob) storage.TrainingJob {
	j.Version = m.pos
	return *j
}

// close ends a job with its terminal event and drops it from memory.
func (m *Machine) close(j *storage.TrainingJob, status, errMsg string) Changes {
	j.Status, j.ErrorMessage = status, errMsg
	j.LeaseUntil = nil
	end := m.now
	j.TrainingEnd = &end
	ev := m.event(j, terminalEvent(status, errMsg))
	delete(m.jobs, j.ID)
	m.closed = append(m.closed, j.ID)
	if len(m.closed) > maxClosed {
		m.closed = slices.Clone(m.closed[len(m.closed)-maxClosed:])
	}
	return Changes{Jobs: []storage.TrainingJob{m.changed(j)}, Events: []storage.TrainingEvent{ev}}
}

// maxClosed bounds the ended job ids remembered.
const maxClosed = 4096

// Terminal event types, as the reference's clients read them.
const (
	EventStarted      = "training_started"
	EventGradientStep = "gradient_step"
	EventEnded        = "training_ended"
	EventFailed       = "training_failed"
)

// CancelledMessage is the error_message of a cancelled job's terminal
// event.
const CancelledMessage = "the training job was cancelled"

func terminalEvent(status, errMsg string) NewEvent {
	switch status {
	case storage.JobSucceeded:
		return NewEvent{Type: EventEnded, Data: json.RawMessage(`{}`)}
	case storage.JobCancelled:
		errMsg = CancelledMessage
	}
	data, _ := json.Marshal(map[string]string{"error_message": errMsg}) // a string map always encodes
	return NewEvent{Type: EventFailed, Data: data}
}

func (m *Machine) sortedIDs() []string { return slices.Sorted(maps.Keys(m.jobs)) }

func entityOf(projectID string) string {
	e, _, _ := strings.Cut(projectID, "/")
	return e
}
