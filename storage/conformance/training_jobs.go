package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func trainingJob(id, project string, version int64) storage.TrainingJob {
	return storage.TrainingJob{ID: id, ProjectID: project, ModelID: "m1", Kind: storage.JobKindRL, Status: storage.JobQueued,
		MaxAttempts: 3, TargetStep: 1, CreatedAt: base, QueuedAt: base, Version: version}
}

func testJobsVersioned(t *testing.T, s storage.TrainingBackend) {
	must(t, s.SaveTrainingJobs(bg, []storage.TrainingJob{trainingJob("j1", "acme/p", 1)}, nil))
	until, start := base.Add(time.Minute), base.Add(time.Second)
	running := trainingJob("j1", "acme/p", 5)
	running.Status, running.Attempts, running.LeaseID, running.Worker = storage.JobRunning, 1, "lease-1", "gpu-1"
	running.LeaseUntil, running.TrainingStart, running.LeaseAck, running.LastSeq = &until, &start, 2, 3
	running.CancelRequested, running.CheckpointStep = true, 1
	must(t, s.SaveTrainingJobs(bg, []storage.TrainingJob{running}, nil))
	stale := trainingJob("j1", "acme/p", 4)
	stale.Status = storage.JobFailed
	must(t, s.SaveTrainingJobs(bg, []storage.TrainingJob{stale}, nil))
	got, err := s.GetTrainingJob(bg, "acme", "j1")
	must(t, err)
	if !reflect.DeepEqual(got, running) {
		t.Fatalf("after a stale write:\n got %+v\nwant %+v", got, running)
	}
	end := base.Add(time.Hour)
	done := running
	done.Status, done.LeaseUntil, done.TrainingEnd, done.ErrorMessage, done.Version = storage.JobFailed, nil, &end, "boom", 6
	must(t, s.SaveTrainingJobs(bg, []storage.TrainingJob{done, done}, nil))
	got, err = s.GetTrainingJob(bg, "*", "j1")
	must(t, err)
	if !reflect.DeepEqual(got, done) {
		t.Fatalf("after a newer write:\n got %+v\nwant %+v", got, done)
	}
	_, err = s.GetTrainingJob(bg, "rival", "j1")
	wantKind(t, "job read by another entity", err, storage.ErrNotFound)
}

func testOpenJobs(t *testing.T, s storage.TrainingBackend) {
	q, r, f := trainingJob("j1", "acme/p", 3), trainingJob("j2", "acme/p", 4), trainingJob("j3", "rival/p", 9)
	r.Status, r.QueuedAt = storage.JobRunning, base.Add(-time.Second)
	f.Status = storage.JobSucceeded
	must(t, s.SaveTrainingJobs(bg, []storage.TrainingJob{q, r, f}, nil))
	open, top, err := s.OpenTrainingJobs(bg)
	must(t, err)
	if top != 9 || len(open) != 2 || open[0].ID != "j2" || open[1].ID != "j1" {
		t.Fatalf("open = %+v top %d, want j2, j1 and 9", open, top)
	}
	n, err := s.CountOpenJobs(bg, "m1")
	must(t, err)
	if n != 2 {
		t.Fatalf("open jobs of m1 = %d, want 2", n)
	}
}

func trainingEvent(job string, seq int64) storage.TrainingEvent {
	return storage.TrainingEvent{JobID: job, Seq: seq, ID: fmt.Sprintf("%s-e%d", job, seq), Type: "gradient_step",
		Data: json.RawMessage(fmt.Sprintf(`{"loss":%d}`, seq)), CreatedAt: base.Add(time.Duration(seq) * time.Millisecond)}
}

func testEventsPaged(t *testing.T, s storage.TrainingBackend) {
	var first, second []storage.TrainingEvent
	for seq := int64(1); seq <= 5; seq++ {
		first = append(first, trainingEvent("j1", seq))
	}
	for seq := int64(3); seq <= 7; seq++ {
		second = append(second, trainingEvent("j1", seq))
	}
	must(t, s.SaveTrainingJobs(bg, nil, first))
	must(t, s.SaveTrainingJobs(bg, nil, second))
	must(t, s.SaveTrainingJobs(bg, nil, []storage.TrainingEvent{trainingEvent("j2", 1)}))
	page, more, err := s.ListTrainingEvents(bg, "j1", 0, 3)
	must(t, err)
	if len(page) != 3 || !more || !reflect.DeepEqual(page[0], first[0]) {
		t.Fatalf("first page = %+v more %v", page, more)
	}
	after, err := s.TrainingEventSeq(bg, "j1", page[2].ID)
	must(t, err)
	page, more, err = s.ListTrainingEvents(bg, "j1", after, 10)
	must(t, err)
	if len(page) != 4 || more || page[0].Seq != 4 || page[3].Seq != 7 {
		t.Fatalf("second page = %+v more %v, want 4..7", page, more)
	}
	page, more, err = s.ListTrainingEvents(bg, "j1", 7, 10)
	must(t, err)
	if len(page) != 0 || more {
		t.Fatalf("page after the end = %+v more %v", page, more)
	}
	_, err = s.TrainingEventSeq(bg, "j1", "j2-e1")
	wantKind(t, "cursor of another job", err, storage.ErrInvalidArgument)
}

func testInputsSnapshots(t *testing.T, s storage.TrainingBackend) {
	in := storage.JobInput{JobID: "j1", ProjectID: "acme/p", Body: json.RawMessage(`{"trajectory_groups":[]}`)}
	must(t, s.PutJobInput(bg, in))
	got, err := s.GetJobInput(bg, "acme/p", "j1")
	must(t, err)
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("input = %+v", got)
	}
	_, err = s.GetJobInput(bg, "acme/q", "j1")
	wantKind(t, "input read through another project", err, storage.ErrNotFound)
	_, err = s.LatestQueueSnapshot(bg)
	wantKind(t, "no snapshot yet", err, storage.ErrNotFound)
	for _, pos := range []int64{7, 42, 12} {
		must(t, s.SaveQueueSnapshot(bg, storage.QueueSnapshot{Position: pos, State: []byte(fmt.Sprintf(`{"p":%d}`, pos)), CreatedAt: base}))
	}
	snap, err := s.LatestQueueSnapshot(bg)
	must(t, err)
	if snap.Position != 42 || string(snap.State) != `{"p":42}` || !snap.CreatedAt.Equal(base) {
		t.Fatalf("latest snapshot = %+v", snap)
	}
	must(t, s.PingTraining(bg))
}
