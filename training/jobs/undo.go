package jobs

import (
	"slices"
	"time"

	"github.com/weftdev/weft/storage"
)

// undoLog is the state before the commands applied since the last
// Commit: each touched job as it was (nil: absent), the position and the
// clock.
type undoLog struct {
	saved  bool
	pos    int64
	now    time.Time
	closed []string
	jobs   map[string]*storage.TrainingJob
}

// Record makes the machine remember what each command changes until
// Commit, so Rollback can undo a batch whose rows could not be stored.
func (m *Machine) Record() { m.undo = &undoLog{jobs: map[string]*storage.TrainingJob{}} }

// Commit forgets what Rollback would undo.
func (m *Machine) Commit() {
	if m.undo != nil {
		m.undo = &undoLog{jobs: map[string]*storage.TrainingJob{}}
	}
}

// Rollback returns the machine to its state at the last Commit.
func (m *Machine) Rollback() {
	u := m.undo
	if u == nil || !u.saved {
		return
	}
	m.pos, m.now, m.closed = u.pos, u.now, u.closed
	for id, j := range u.jobs {
		if j == nil {
			delete(m.jobs, id)
		} else {
			m.jobs[id] = j
		}
	}
	m.rebuildQueues()
	m.Commit()
}

// remember saves the position and clock before a batch's first command.
func (m *Machine) remember() {
	if m.undo != nil && !m.undo.saved {
		m.undo.saved, m.undo.pos, m.undo.now = true, m.pos, m.now
		m.undo.closed = slices.Clone(m.closed)
	}
}

// touch saves a job before a command first changes it.
func (m *Machine) touch(id string) {
	if m.undo == nil {
		return
	}
	if _, ok := m.undo.jobs[id]; ok {
		return
	}
	if j, ok := m.jobs[id]; ok {
		jc := *j
		m.undo.jobs[id] = &jc
		return
	}
	m.undo.jobs[id] = nil
}
