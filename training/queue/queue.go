// Package queue runs the training job queue (the state machine of
// package training/jobs) behind one interface, Sequencer: commands go
// in, are applied in one total order, their job rows and events are
// stored, and only then is the submitter answered. Local applies them in
// this process, for the embedded store and a single ClickHouse process;
// the kafkaqueue subpackage orders them through a Kafka partition for
// any number of replicas.
//
// It must never import HTTP code or storage backends.
package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/jobs"
)

// Sequencer applies job queue commands in one total order.
type Sequencer interface {
	// Submit applies cmd (its ID and At are filled when empty) and
	// returns once its changes are stored. An error is an outage
	// (storage.ErrUnavailable); a refusal is in the result.
	Submit(ctx context.Context, cmd jobs.Command) (jobs.Result, error)
	// Wake returns a channel closed when a job is next queued, for
	// workers waiting to lease. Take it before the lease attempt it
	// follows, so no change falls in between.
	Wake() <-chan struct{}
	// Check submits a no-op and waits for it: the queue's health.
	Check(ctx context.Context) error
}

// Store is what the sequencers keep in storage.
type Store interface {
	SaveTrainingJobs(ctx context.Context, jobs []storage.TrainingJob, events []storage.TrainingEvent) error
	OpenTrainingJobs(ctx context.Context) ([]storage.TrainingJob, int64, error)
	SaveQueueSnapshot(ctx context.Context, s storage.QueueSnapshot) error
	LatestQueueSnapshot(ctx context.Context) (storage.QueueSnapshot, error)
}

// Prepare fills a command's ID and time when the submitter left them out.
func Prepare(cmd jobs.Command, now time.Time) jobs.Command {
	if cmd.ID == "" {
		cmd.ID = uuid.NewString()
	}
	if cmd.At.IsZero() {
		cmd.At = now.UTC()
	}
	return cmd
}

// Queues reports whether a result put a job in the queue (created or
// re-queued), which may let a waiting worker lease.
func Queues(r jobs.Result) bool {
	for _, j := range r.Changes.Jobs {
		if j.Status == storage.JobQueued {
			return true
		}
	}
	return false
}

// Notifier wakes every waiter at once.
type Notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewNotifier returns a notifier with nobody woken yet.
func NewNotifier() *Notifier { return &Notifier{ch: make(chan struct{})} }

// Wait returns the channel the next Broadcast closes.
func (n *Notifier) Wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

// Broadcast wakes everyone waiting.
func (n *Notifier) Broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	close(n.ch)
	n.ch = make(chan struct{})
}

// Unavailable marks an error as a temporary outage (HTTP 503).
func Unavailable(what string, err error) error {
	if errors.Is(err, storage.ErrUnavailable) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w: %w", what, storage.ErrUnavailable, err)
}

// Check is Sequencer.Check for any sequencer: a ping must come back.
func Check(ctx context.Context, s Sequencer) error {
	r, err := s.Submit(ctx, jobs.Command{Kind: jobs.KindPing})
	if err == nil && r.Refusal != nil {
		err = r.Refusal
	}
	return err
}
