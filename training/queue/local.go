package queue

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/training/jobs"
)

// Local is the queue of one process: a single goroutine applies
// commands in arrival order, many at a time, and stores each batch's
// changes in one write before answering it (group commit). A batch whose
// write fails is undone in memory and every command in it answered 503,
// so memory never runs ahead of storage. Only one process may run a
// Local over a store: two would each grant leases.
type Local struct {
	// Loop runs Run between Start and Shutdown: it is a component of
	// the process.
	*lifecycle.Loop
	store  Store
	m      *jobs.Machine
	reqs   chan request
	done   chan struct{}
	wake   *Notifier
	now    func() time.Time
	tick   time.Duration
	logger *slog.Logger
}

type request struct {
	cmd   jobs.Command
	reply chan reply
}

type reply struct {
	r   jobs.Result
	err error
}

// maxBatch bounds the commands applied and stored at once.
const maxBatch = 512

// NewLocal loads the open jobs from store. tick is how often leases are
// checked for their end.
func NewLocal(ctx context.Context, store Store, tick time.Duration, now func() time.Time, logger *slog.Logger) (*Local, error) {
	open, top, err := store.OpenTrainingJobs(ctx)
	if err != nil {
		return nil, Unavailable("loading the open training jobs", err)
	}
	m := jobs.Restore(open, nil, top, now().UTC())
	m.Record()
	l := &Local{store: store, m: m, reqs: make(chan request, maxBatch), done: make(chan struct{}), wake: NewNotifier(),
		now: now, tick: tick, logger: logger}
	l.Loop = lifecycle.NewLoop("training job queue", logger, l.Run)
	return l, nil
}

// Submit implements Sequencer.
func (l *Local) Submit(ctx context.Context, cmd jobs.Command) (jobs.Result, error) {
	req := request{cmd: Prepare(cmd, l.now()), reply: make(chan reply, 1)}
	select {
	case l.reqs <- req:
	case <-l.done:
		return jobs.Result{}, Unavailable("training job queue", errors.New("stopped"))
	case <-ctx.Done():
		return jobs.Result{}, Unavailable("training job queue", ctx.Err())
	}
	select {
	case rep := <-req.reply:
		return rep.r, rep.err
	case <-l.done:
		return jobs.Result{}, Unavailable("training job queue", errors.New("stopped"))
	case <-ctx.Done():
		// The command may still be applied; the caller's retry is
		// harmless (commands are idempotent or refused).
		return jobs.Result{}, Unavailable("training job queue", ctx.Err())
	}
}

// Wake implements Sequencer.
func (l *Local) Wake() <-chan struct{} { return l.wake.Wait() }

// Check implements Sequencer.
func (l *Local) Check(ctx context.Context) error { return Check(ctx, l) }

// Run applies commands until ctx ends.
func (l *Local) Run(ctx context.Context) error {
	defer close(l.done)
	ticker := time.NewTicker(l.tick)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case req := <-l.reqs:
			l.applyBatch(ctx, l.drain(req))
		case <-ticker.C:
			if l.m.Running() > 0 {
				l.applyBatch(ctx, []request{{cmd: Prepare(jobs.Command{Kind: jobs.KindTick}, l.now())}})
			}
		}
	}
}

// drain takes the requests already waiting after first.
func (l *Local) drain(first request) []request {
	batch := []request{first}
	for len(batch) < maxBatch {
		select {
		case req := <-l.reqs:
			batch = append(batch, req)
		default:
			return batch
		}
	}
	return batch
}

func (l *Local) applyBatch(ctx context.Context, batch []request) {
	results := make([]jobs.Result, len(batch))
	var all jobs.Changes
	woke := false
	for i, req := range batch {
		results[i] = l.m.Apply(l.m.Position()+1, req.cmd)
		all.Add(results[i].Changes)
		woke = woke || Queues(results[i])
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	err := l.store.SaveTrainingJobs(wctx, all.Jobs, all.Events)
	cancel()
	if err != nil {
		l.m.Rollback()
		l.logger.Warn("training job queue: storing a batch of commands failed; it was undone and its callers got 503 and retry; if it repeats, check the store", "commands", len(batch), "err", err)
		err = Unavailable("storing training job changes", err)
	} else {
		l.m.Commit()
	}
	for i, req := range batch {
		if req.reply != nil {
			req.reply <- reply{r: results[i], err: err}
		}
	}
	if err == nil && woke {
		l.wake.Broadcast()
	}
}

// storeTimeout bounds one batch's write.
const storeTimeout = 30 * time.Second

var _ Sequencer = (*Local)(nil)
