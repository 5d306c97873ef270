package jobs

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// randomCommands is a seeded stream of commands of every kind, with
// leases both current and stale.
func randomCommands(seed uint64, n int) []Command {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	at := t0
	var leases []Command
	var out []Command
	for i := range n {
		at = at.Add(time.Duration(rng.IntN(4000)) * time.Millisecond)
		job := fmt.Sprintf("j%d", rng.IntN(12))
		c := Command{ID: fmt.Sprintf("c%d", i), At: at, JobID: job, TTL: 5 * time.Second}
		if len(leases) > 0 {
			l := leases[rng.IntN(len(leases))]
			c.LeaseID, c.JobID = l.ID, l.JobID
		}
		switch rng.IntN(9) {
		case 0, 1:
			c.Kind, c.ProjectID, c.ModelID, c.MaxAttempts = KindCreate, []string{"acme/p", "rival/p"}[rng.IntN(2)], "m", 1+rng.IntN(3)
			c.JobID = job
		case 2:
			c.Kind, c.Entity, c.Worker = KindLease, []string{"acme", "rival", "*"}[rng.IntN(3)], "w"
		case 3:
			c.Kind = KindHeartbeat
		case 4:
			c.Kind, c.From, c.Events = KindAppend, int64(1+rng.IntN(3)), []NewEvent{gradient(1), gradient(2)}
		case 5:
			c.Kind, c.Step, c.Record = KindCheckpoint, int64(1+rng.IntN(3)), rng.IntN(2) == 0
		case 6:
			c.Kind, c.Outcome = KindFinish, []string{OutcomeSucceeded, OutcomeFailed, OutcomeCancelled}[rng.IntN(3)]
		case 7:
			c.Kind, c.JobID = KindCancel, job
		default:
			c.Kind = KindTick
		}
		out = append(out, c)
		if c.Kind == KindLease {
			leases = append(leases, c)
		}
	}
	return out
}

// TestSameCommandsSameState is what the scale-out queue rests on: two
// machines applying one log agree on every answer and every row; and
// throughout, no job has two valid leases and every ended job has
// exactly one terminal event.
func TestSameCommandsSameState(t *testing.T) {
	for seed := range uint64(20) {
		cmds := randomCommands(seed, 400)
		a, b := New(), New()
		terminal, current := map[string]int{}, map[string]string{}
		for i, c := range cmds {
			ra, rb := a.Apply(int64(i+1), c), b.Apply(int64(i+1), c)
			if !reflect.DeepEqual(ra, rb) {
				t.Fatalf("seed %d command %d (%s): answers differ\n%+v\n%+v", seed, i, c.Kind, ra, rb)
			}
			checkOneHolder(t, c, ra, current)
			for _, e := range ra.Changes.Events {
				if e.Type == EventEnded || e.Type == EventFailed {
					terminal[e.JobID]++
				}
			}
			checkInvariants(t, a, terminal)
		}
		if !reflect.DeepEqual(a.Snapshot(), b.Snapshot()) {
			t.Fatalf("seed %d: snapshots differ", seed)
		}
	}
}

// checkOneHolder fails when a command under a lease succeeds although
// the job was leased again after that lease was granted.
func checkOneHolder(t *testing.T, c Command, r Result, current map[string]string) {
	t.Helper()
	switch {
	case c.Kind == KindLease && r.Granted:
		current[r.Job.ID] = r.Job.LeaseID
	case c.LeaseID != "" && (c.Kind == KindHeartbeat || c.Kind == KindAppend || c.Kind == KindCheckpoint || c.Kind == KindFinish) && r.Refusal == nil:
		if current[c.JobID] != c.LeaseID {
			t.Fatalf("%s under lease %s succeeded on %s, which lease %s holds", c.Kind, c.LeaseID, c.JobID, current[c.JobID])
		}
	}
}

func checkInvariants(t *testing.T, m *Machine, terminal map[string]int) {
	t.Helper()
	leases := map[string]string{}
	for _, j := range m.Open() {
		if terminal[j.ID] != 0 {
			t.Fatalf("open job %s already has a terminal event", j.ID)
		}
		if j.Status == storage.JobRunning {
			if other, ok := leases[j.LeaseID]; ok {
				t.Fatalf("lease %s holds %s and %s", j.LeaseID, other, j.ID)
			}
			leases[j.LeaseID] = j.ID
		}
	}
	for id, n := range terminal {
		if n != 1 {
			t.Fatalf("job %s has %d terminal events", id, n)
		}
	}
}

func TestRollbackUndoesABatch(t *testing.T) {
	cmds := randomCommands(7, 300)
	m := New()
	m.Record()
	for i, c := range cmds[:150] {
		m.Apply(int64(i+1), c)
	}
	m.Commit()
	before := m.Snapshot()
	for i, c := range cmds[150:] {
		m.Apply(int64(151+i), c)
	}
	m.Rollback()
	if got := m.Snapshot(); string(got) != string(before) {
		t.Fatalf("after rollback:\n%s\nwant\n%s", got, before)
	}
	// The rolled-back machine answers the rest as one that never saw it.
	fresh, err := DecodeSnapshot(before)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds[150:] {
		if ra, rb := m.Apply(int64(151+i), c), fresh.Apply(int64(151+i), c); !reflect.DeepEqual(ra, rb) {
			t.Fatalf("command %d after rollback answers %+v, a restored machine %+v", 150+i, ra, rb)
		}
	}
}

func TestSnapshotRestoresQueueOrder(t *testing.T) {
	d := newDriver(t)
	for i := range 5 {
		d.create(fmt.Sprintf("j%d", i), "acme/p", 1)
		d.advance(time.Second)
	}
	d.mustLease("acme", "j0")
	m, err := DecodeSnapshot(d.m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 5; i++ {
		r := m.Apply(int64(100+i), Command{ID: fmt.Sprintf("x%d", i), At: d.at, Kind: KindLease, Entity: "*", TTL: time.Second})
		if r.Job.ID != fmt.Sprintf("j%d", i) {
			t.Fatalf("restored queue leased %s, want j%d", r.Job.ID, i)
		}
	}
	if _, err := DecodeSnapshot([]byte(`{"v":9}`)); err == nil {
		t.Fatal("a snapshot of an unknown format decoded")
	}
}
