package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/training/jobs"
)

// flakyStore is the real store with writes that fail on demand.
type flakyStore struct {
	Store
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

func runLocal(t *testing.T, store Store) *Local {
	t.Helper()
	l, err := NewLocal(context.Background(), store, 50*time.Millisecond, time.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

func createJobs(t *testing.T, s Sequencer, n int) {
	t.Helper()
	for i := range n {
		r, err := s.Submit(context.Background(), jobs.Command{Kind: jobs.KindCreate, JobID: fmt.Sprintf("j%03d", i),
			ProjectID: "acme/p", ModelID: "m", JobKind: storage.JobKindRL, MaxAttempts: 2})
		if err != nil || r.Refusal != nil {
			t.Fatalf("create %d: %v %+v", i, err, r.Refusal)
		}
	}
}

// leaseConcurrently has workers lease until the queue is empty and
// fails if a job was handed out twice or not at all.
func leaseConcurrently(t *testing.T, seqs []Sequencer, workers, want int) map[string]string {
	t.Helper()
	var mu sync.Mutex
	held := map[string]string{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := seqs[w%len(seqs)]
			for {
				r, err := s.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: fmt.Sprintf("w%d", w), TTL: time.Minute})
				if err != nil {
					t.Errorf("lease: %v", err)
					return
				}
				if !r.Granted {
					return
				}
				mu.Lock()
				if other, ok := held[r.Job.ID]; ok {
					t.Errorf("job %s leased by %s and by lease %s", r.Job.ID, other, r.Job.LeaseID)
				}
				held[r.Job.ID] = r.Job.LeaseID
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(held) != want {
		t.Fatalf("%d jobs leased, want %d", len(held), want)
	}
	return held
}

func TestLocalNeverLeasesAJobTwice(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	l := runLocal(t, store)
	createJobs(t, l, 200)
	leaseConcurrently(t, []Sequencer{l}, 8, 200)
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
	l, err := NewLocal(ctx, store, time.Hour, time.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	createJobs(t, l, 2)
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
	createJobs(t, l, 1)
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
	createJobs(t, l, 1)
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
