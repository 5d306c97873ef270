package jobs

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/storage"
)

// fifo is one entity's queued jobs, oldest first. Entries are removed
// lazily: one whose job is no longer queued at the time it was queued is
// skipped when it reaches the head.
type fifo struct {
	entries []queued
	head    int
}

type queued struct {
	id string
	at time.Time
}

func (m *Machine) enqueue(j *storage.TrainingJob) {
	e := entityOf(j.ProjectID)
	q := m.queues[e]
	if q == nil {
		q = &fifo{}
		m.queues[e] = q
	}
	q.entries = append(q.entries, queued{id: j.ID, at: j.QueuedAt})
}

// front returns the entity's oldest queued job, dropping stale entries.
func (m *Machine) front(entity string) *storage.TrainingJob {
	q := m.queues[entity]
	if q == nil {
		return nil
	}
	for q.head < len(q.entries) {
		e := q.entries[q.head]
		if j, ok := m.jobs[e.id]; ok && j.Status == storage.JobQueued && j.QueuedAt.Equal(e.at) {
			return j
		}
		q.head++
	}
	// Empty: let the backing array go.
	delete(m.queues, entity)
	return nil
}

// oldestQueued is the job a worker of entity leases next: its entity's
// oldest, or for AnyEntity the oldest of all (ties broken by id).
func (m *Machine) oldestQueued(entity string) *storage.TrainingJob {
	if entity != AnyEntity {
		return m.front(entity)
	}
	var best *storage.TrainingJob
	for _, e := range m.sortedEntities() {
		j := m.front(e)
		if j != nil && (best == nil || j.QueuedAt.Before(best.QueuedAt) || (j.QueuedAt.Equal(best.QueuedAt) && j.ID < best.ID)) {
			best = j
		}
	}
	return best
}

func (m *Machine) sortedEntities() []string { return slices.Sorted(maps.Keys(m.queues)) }

// rebuildQueues orders the queued jobs afresh (after a restore or a
// rollback).
func (m *Machine) rebuildQueues() {
	m.queues = map[string]*fifo{}
	var queuedJobs []*storage.TrainingJob
	for _, id := range m.sortedIDs() {
		if j := m.jobs[id]; j.Status == storage.JobQueued {
			queuedJobs = append(queuedJobs, j)
		}
	}
	slices.SortStableFunc(queuedJobs, func(a, b *storage.TrainingJob) int { return a.QueuedAt.Compare(b.QueuedAt) })
	for _, j := range queuedJobs {
		m.enqueue(j)
	}
}

// eventSpace namespaces event ids: an event's id derives from its job
// and sequence number, so every replica gives it the same one.
var eventSpace = uuid.MustParse("0b7c6d4e-3f0a-5c1b-9a8e-6d2f4b1c7e90")

// EventID is the id of a job's event with seq.
func EventID(jobID string, seq int64) string {
	return uuid.NewSHA1(eventSpace, []byte(jobID+"/"+strconv.FormatInt(seq, 10))).String()
}

// event appends one event to j.
func (m *Machine) event(j *storage.TrainingJob, e NewEvent) storage.TrainingEvent {
	j.LastSeq++
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	return storage.TrainingEvent{JobID: j.ID, Seq: j.LastSeq, ID: EventID(j.ID, j.LastSeq), Type: e.Type, Data: data, CreatedAt: m.now}
}
