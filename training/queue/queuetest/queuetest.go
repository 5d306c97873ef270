// Package queuetest drives a training job queue (any queue.Sequencer)
// from many workers at once and checks the one rule that matters most:
// no job is ever held by two leases. Tests of every sequencer use it.
//
// Production code must never import it.
package queuetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/queue"
)

// CreateJobs queues n RL jobs of project acme/p, named prefix000...,
// spread over the sequencers given.
func CreateJobs(t testing.TB, seqs []queue.Sequencer, prefix string, n int) {
	t.Helper()
	for i := range n {
		r, err := seqs[i%len(seqs)].Submit(context.Background(), jobs.Command{Kind: jobs.KindCreate,
			JobID: fmt.Sprintf("%s%03d", prefix, i), ProjectID: "acme/p", ModelID: "m", JobKind: storage.JobKindRL, MaxAttempts: 2})
		if err != nil || r.Refusal != nil {
			t.Fatalf("create %d: %v %+v", i, err, r.Refusal)
		}
	}
}

// LeaseAll has workers (spread over the sequencers) lease until none is
// left, fails the test if a job was handed out twice or if other than
// want jobs were leased, and returns each job's lease.
func LeaseAll(t testing.TB, seqs []queue.Sequencer, workers, want int) map[string]string {
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
				r, err := s.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme",
					Worker: fmt.Sprintf("w%d", w), TTL: time.Minute})
				if err != nil {
					t.Errorf("lease: %v", err)
					return
				}
				if !r.Granted {
					return
				}
				mu.Lock()
				if other, ok := held[r.Job.ID]; ok {
					t.Errorf("job %s leased twice: %s and %s", r.Job.ID, other, r.Job.LeaseID)
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
