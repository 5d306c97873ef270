package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/queue"
	"github.com/weftdev/weft/training/queue/queuetest"
)

// flakyStore is the real store with writes that fail on demand.
type flakyStore struct {
	queue.Store
	fail atomic.Bool
}

func (f *flakyStore) SaveTrainingJobs(ctx context.Context, js []storage.TrainingJob, es []storage.TrainingEvent) error {
	if f.fail.Load() {
		return fmt.Errorf("disk full: %w", storage.ErrUnavailable)
	}
	return f.Store.SaveTrainingJobs(ctx, js, es)
}

func openStore(t *testing.T, dir string) *duckdb.Store {
	t.Helper()
	s, err := duckdb.Open(context.Background(), dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runLocal(t *testing.T, store queue.Store) *queue.Local {
	t.Helper()
	l, err := queue.NewLocal(context.Background(), store, 50*time.Millisecond, time.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

func TestLocalNeverLeasesAJobTwice(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	l := runLocal(t, store)
	queuetest.CreateJobs(t, []queue.Sequencer{l}, "j", 200)
	queuetest.LeaseAll(t, []queue.Sequencer{l}, 8, 200)
	open, _, err := store.OpenTrainingJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range open {
		if j.Status != storage.JobRunning || j.LeaseID == "" {
			t.Fatalf("stored job %+v is not running under a lease", j)
		}
	}
}

func TestLocalSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	store := openStore(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	l, err := queue.NewLocal(ctx, store, time.Hour, time.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	queuetest.CreateJobs(t, []queue.Sequencer{l}, "j", 2)
	r, err := l.Submit(ctx, jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w", TTL: time.Minute})
	if err != nil || !r.Granted {
		t.Fatalf("lease: %v %+v", err, r)
	}
	cancel()
	<-done
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	store = openStore(t, dir)
	defer store.Close()
	again := runLocal(t, store)
	hb, err := again.Submit(context.Background(), jobs.Command{Kind: jobs.KindHeartbeat, JobID: r.Job.ID, LeaseID: r.Job.LeaseID, TTL: time.Minute})
	if err != nil || hb.Refusal != nil {
		t.Fatalf("heartbeat after restart: %v %+v", err, hb.Refusal)
	}
	next, err := again.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w2", TTL: time.Minute})
	if err != nil || !next.Granted || next.Job.ID == r.Job.ID {
		t.Fatalf("second lease after restart = %+v, %v", next, err)
	}
}

func TestLocalUndoesWhatItCouldNotStore(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	flaky := &flakyStore{Store: store}
	l := runLocal(t, flaky)
	queuetest.CreateJobs(t, []queue.Sequencer{l}, "j", 1)
	flaky.fail.Store(true)
	_, err := l.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w", TTL: time.Minute})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("lease while storage fails: %v, want unavailable", err)
	}
	flaky.fail.Store(false)
	r, err := l.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w", TTL: time.Minute})
	if err != nil || !r.Granted || r.Job.Attempts != 1 {
		t.Fatalf("lease after the outage = %+v, %v; want the job's first attempt", r, err)
	}
}

func TestLocalWakesWaitersAndRequeuesExpiredLeases(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	l := runLocal(t, store)
	wake := l.Wake()
	queuetest.CreateJobs(t, []queue.Sequencer{l}, "j", 1)
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatal("creating a job woke nobody")
	}
	r, err := l.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w", TTL: 100 * time.Millisecond})
	if err != nil || !r.Granted {
		t.Fatalf("lease: %v %+v", err, r)
	}
	wake = l.Wake()
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatal("the lease ended and nobody was woken")
	}
	j, err := store.GetTrainingJob(context.Background(), "acme", r.Job.ID)
	if err != nil || j.Status != storage.JobQueued || j.Attempts != 1 {
		t.Fatalf("stored job after its lease ended = %+v, %v", j, err)
	}
	if err := l.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}
