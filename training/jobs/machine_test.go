package jobs

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

var t0 = time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)

// driver applies commands at increasing positions and times.
type driver struct {
	t   *testing.T
	m   *Machine
	pos int64
	at  time.Time
	// events and rows collect every change, as a store would.
	events map[string][]storage.TrainingEvent
	rows   map[string]storage.TrainingJob
}

func newDriver(t *testing.T) *driver {
	return &driver{t: t, m: New(), at: t0, events: map[string][]storage.TrainingEvent{}, rows: map[string]storage.TrainingJob{}}
}

func (d *driver) apply(c Command) Result {
	d.pos++
	if c.At.IsZero() {
		c.At = d.at
	}
	if c.ID == "" {
		c.ID = fmt.Sprintf("cmd-%d", d.pos)
	}
	r := d.m.Apply(d.pos, c)
	for _, j := range r.Changes.Jobs {
		if j.Version != d.pos {
			d.t.Fatalf("row of %s has version %d at position %d", j.ID, j.Version, d.pos)
		}
		d.rows[j.ID] = j
	}
	for _, e := range r.Changes.Events {
		d.events[e.JobID] = append(d.events[e.JobID], e)
	}
	return r
}

func (d *driver) advance(dt time.Duration) { d.at = d.at.Add(dt) }

func (d *driver) create(id, project string, attempts int) {
	d.t.Helper()
	r := d.apply(Command{Kind: KindCreate, JobID: id, ProjectID: project, ModelID: "m-" + project, JobKind: storage.JobKindRL, MaxAttempts: attempts})
	if r.Refusal != nil || r.Job.Status != storage.JobQueued {
		d.t.Fatalf("create %s: %+v", id, r)
	}
}

func (d *driver) lease(entity string) Result {
	return d.apply(Command{Kind: KindLease, Entity: entity, Worker: "w-" + entity, TTL: 10 * time.Second})
}

func (d *driver) mustLease(entity, want string) string {
	d.t.Helper()
	r := d.lease(entity)
	if !r.Granted || r.Job.ID != want {
		d.t.Fatalf("lease for %s = %+v, want job %s", entity, r, want)
	}
	return r.Job.LeaseID
}

func wantRefusal(t *testing.T, what string, r Result, code Code) {
	t.Helper()
	if r.Refusal == nil || r.Refusal.Code != code {
		t.Fatalf("%s: result %+v, want refusal %s", what, r, code)
	}
}

func gradient(loss float64) NewEvent {
	return NewEvent{Type: EventGradientStep, Data: json.RawMessage(fmt.Sprintf(`{"loss":%g}`, loss))}
}

func TestJobRunsToSuccess(t *testing.T) {
	d := newDriver(t)
	d.create("j1", "acme/p", 3)
	lease := d.mustLease("acme", "j1")
	if lease != fmt.Sprintf("cmd-%d", d.pos) {
		t.Fatalf("lease id %s is not its command's id", lease)
	}
	hb := d.apply(Command{Kind: KindHeartbeat, JobID: "j1", LeaseID: lease, TTL: time.Minute})
	if hb.Refusal != nil || !hb.Job.LeaseUntil.Equal(t0.Add(time.Minute)) {
		t.Fatalf("heartbeat = %+v", hb)
	}
	started := NewEvent{Type: EventStarted, Data: json.RawMessage(`{"num_sequences":2}`)}
	d.apply(Command{Kind: KindAppend, JobID: "j1", LeaseID: lease, From: 1, Events: []NewEvent{started, gradient(1)}})
	// A retry of the same batch plus one new event: only the new one lands.
	d.apply(Command{Kind: KindAppend, JobID: "j1", LeaseID: lease, From: 1, Events: []NewEvent{started, gradient(1), gradient(0.5)}})
	wantRefusal(t, "finish before the checkpoint", d.apply(Command{Kind: KindFinish, JobID: "j1", LeaseID: lease, Outcome: OutcomeSucceeded}), NotReady)
	wantRefusal(t, "a checkpoint below the target", d.apply(Command{Kind: KindCheckpoint, JobID: "j1", LeaseID: lease, Step: 0}), Invalid)
	if r := d.apply(Command{Kind: KindCheckpoint, JobID: "j1", LeaseID: lease, Step: 1}); r.Refusal != nil || len(r.Changes.Jobs) != 0 {
		t.Fatalf("checkpoint check = %+v, want accepted without changes", r)
	}
	d.apply(Command{Kind: KindCheckpoint, JobID: "j1", LeaseID: lease, Step: 1, Record: true})
	fin := d.apply(Command{Kind: KindFinish, JobID: "j1", LeaseID: lease, Outcome: OutcomeSucceeded})
	if fin.Refusal != nil || fin.Job.Status != storage.JobSucceeded || fin.Job.TrainingEnd == nil {
		t.Fatalf("finish = %+v", fin)
	}
	wantRefusal(t, "finish twice", d.apply(Command{Kind: KindFinish, JobID: "j1", LeaseID: lease, Outcome: OutcomeSucceeded}), NotOpen)
	var types []string
	for i, e := range d.events["j1"] {
		types = append(types, e.Type)
		if e.Seq != int64(i+1) || e.ID != EventID("j1", e.Seq) {
			t.Fatalf("event %d = %+v", i, e)
		}
	}
	want := []string{EventStarted, EventGradientStep, EventGradientStep, EventEnded}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	if len(d.m.Open()) != 0 {
		t.Fatalf("finished job still open: %+v", d.m.Open())
	}
}

func TestLeaseOrderAndScope(t *testing.T) {
	d := newDriver(t)
	d.create("a1", "acme/p", 1)
	d.advance(time.Second)
	d.create("r1", "rival/p", 1)
	d.advance(time.Second)
	d.create("a2", "acme/q", 1)
	dup := Command{ID: "same", Kind: KindLease, Entity: "rival", TTL: time.Second}
	if a, b := d.apply(dup), d.apply(dup); !a.Granted || !b.Granted || a.Job.ID != "r1" || b.Job.ID != "r1" || len(b.Changes.Jobs) != 0 {
		t.Fatalf("a lease command delivered twice: %+v then %+v", a, b)
	}
	d.apply(Command{Kind: KindFinish, JobID: "r1", LeaseID: "same", Outcome: OutcomeFailed})
	d.create("r2", "rival/p", 1)
	cases := []struct {
		entity string
		want   string
	}{{"rival", "r2"}, {"rival", ""}, {"*", "a1"}, {"acme", "a2"}, {"acme", ""}, {"*", ""}}
	for i, tc := range cases {
		r := d.lease(tc.entity)
		if got := map[bool]string{true: r.Job.ID}[r.Granted]; got != tc.want {
			t.Fatalf("lease %d for %s got %q, want %q", i, tc.entity, got, tc.want)
		}
	}
}

func TestExpiredLeaseRequeuesThenGivesUp(t *testing.T) {
	d := newDriver(t)
	d.create("j1", "acme/p", 2)
	first := d.mustLease("acme", "j1")
	d.advance(11 * time.Second)
	wantRefusal(t, "heartbeat after the lease ended", d.apply(Command{Kind: KindHeartbeat, JobID: "j1", LeaseID: first, TTL: time.Minute}), LeaseLost)
	tick := d.apply(Command{Kind: KindTick})
	if len(tick.Changes.Jobs) != 1 || tick.Changes.Jobs[0].Status != storage.JobQueued {
		t.Fatalf("tick = %+v, want j1 queued again", tick)
	}
	second := d.mustLease("acme", "j1")
	wantRefusal(t, "the first lease after the second", d.apply(Command{Kind: KindAppend, JobID: "j1", LeaseID: first, From: 1,
		Events: []NewEvent{gradient(1)}}), LeaseLost)
	d.advance(11 * time.Second)
	// The lease command itself ends the lease that ran out.
	if r := d.lease("acme"); r.Granted || len(r.Changes.Jobs) != 1 || r.Changes.Jobs[0].Status != storage.JobFailed {
		t.Fatalf("lease after the last attempt ran out = %+v", r)
	}
	wantRefusal(t, "finish by the second lease", d.apply(Command{Kind: KindFinish, JobID: "j1", LeaseID: second, Outcome: OutcomeFailed}), NotOpen)
	evs := d.events["j1"]
	if len(evs) != 1 || evs[0].Type != EventFailed {
		t.Fatalf("events %+v, want one training_failed", evs)
	}
	if row := d.rows["j1"]; row.Attempts != 2 || row.Status != storage.JobFailed {
		t.Fatalf("stored row %+v", row)
	}
}

func TestCancel(t *testing.T) {
	cases := []struct {
		name   string
		steps  func(d *driver, lease string)
		status string
	}{
		{"the worker acknowledges", func(d *driver, lease string) {
			d.apply(Command{Kind: KindFinish, JobID: "j1", LeaseID: lease, Outcome: OutcomeCancelled})
		}, storage.JobCancelled},
		{"the worker finishes anyway", func(d *driver, lease string) {
			d.apply(Command{Kind: KindFinish, JobID: "j1", LeaseID: lease, Outcome: OutcomeFailed, ErrorMessage: "x"})
		}, storage.JobCancelled},
		{"the worker is gone", func(d *driver, _ string) {
			d.advance(time.Minute)
			d.apply(Command{Kind: KindTick})
		}, storage.JobCancelled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t)
			d.create("j1", "acme/p", 3)
			lease := d.mustLease("acme", "j1")
			if r := d.apply(Command{Kind: KindCancel, JobID: "j1"}); !r.Job.CancelRequested || r.Job.Status != storage.JobRunning {
				t.Fatalf("cancel of a running job = %+v", r)
			}
			hb := d.apply(Command{Kind: KindHeartbeat, JobID: "j1", LeaseID: lease, TTL: 10 * time.Second})
			if !hb.Job.CancelRequested {
				t.Fatalf("heartbeat did not carry the cancel: %+v", hb)
			}
			tc.steps(d, lease)
			if row := d.rows["j1"]; row.Status != tc.status || len(d.events["j1"]) != 1 {
				t.Fatalf("row %+v events %+v", row, d.events["j1"])
			}
		})
	}
	d := newDriver(t)
	d.create("q1", "acme/p", 1)
	if r := d.apply(Command{Kind: KindCancel, JobID: "q1"}); r.Job.Status != storage.JobCancelled || len(r.Changes.Events) != 1 {
		t.Fatalf("cancel of a queued job = %+v", r)
	}
	if r := d.lease("acme"); r.Granted {
		t.Fatalf("a cancelled job was leased: %+v", r)
	}
	wantRefusal(t, "cancel twice", d.apply(Command{Kind: KindCancel, JobID: "q1"}), NotOpen)
}

func TestTargetStepsFollowOpenJobs(t *testing.T) {
	d := newDriver(t)
	for i, want := range []int64{5, 6, 7} {
		r := d.apply(Command{Kind: KindCreate, JobID: fmt.Sprintf("j%d", i), ProjectID: "acme/p", ModelID: "m", LatestStep: 4, MaxAttempts: 1})
		if r.Job.TargetStep != want {
			t.Fatalf("job %d targets %d, want %d", i, r.Job.TargetStep, want)
		}
	}
	d.apply(Command{Kind: KindCancel, JobID: "j2"})
	if r := d.apply(Command{Kind: KindCreate, JobID: "j3", ProjectID: "acme/p", ModelID: "m", LatestStep: 4}); r.Job.TargetStep != 7 {
		t.Fatalf("after the last job was cancelled the next targets %d, want 7", r.Job.TargetStep)
	}
}
