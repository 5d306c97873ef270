package delivery

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/storage"
)

// Store is what a worker reads and writes.
type Store interface {
	SecretGetter
	ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]storage.Delivery, error)
	SaveDeliveries(ctx context.Context, ds []storage.Delivery) error
	GetWebhook(ctx context.Context, entity, id string) (storage.Webhook, error)
	SetWebhookHealth(ctx context.Context, entity, id string, h storage.WebhookHealth) error
}

// Options shape a worker.
type Options struct {
	// Owner names this worker's leases; unique per process.
	Owner string
	// Workers bounds the attempts in flight at once (and so the
	// deliveries this process holds leases on).
	Workers int
	// Lease is how long a claimed delivery stays this worker's; it must
	// outlast an attempt (the request timeout).
	Lease time.Duration
	// PollInterval is how often due deliveries are looked for when no
	// wake-up came.
	PollInterval time.Duration
	// DisableAfter disables a webhook whose deliveries all failed for
	// this long.
	DisableAfter time.Duration
	Policy       Policy
}

// Stats count attempts since start.
type Stats struct {
	Delivered, Failed, Retried atomic.Int64
}

// Worker claims due deliveries and attempts them, at most Workers at once.
type Worker struct {
	// Loop runs Run between Start and Shutdown: it is a component of
	// the process.
	*lifecycle.Loop
	store    Store
	box      *secretbox.Box
	sender   *Sender
	opts     Options
	logger   *slog.Logger
	now      func() time.Time
	wake     chan struct{}
	freed    chan struct{}
	slots    chan struct{}
	inflight sync.WaitGroup
	saves    saver
	hooks    hookCache
	Stats    Stats
}

// NewWorker builds a worker; Start runs it.
func NewWorker(store Store, box *secretbox.Box, sender *Sender, opts Options, logger *slog.Logger, now func() time.Time) *Worker {
	if now == nil {
		now = time.Now
	}
	w := &Worker{store: store, box: box, sender: sender, opts: opts, logger: logger, now: now,
		wake: make(chan struct{}, 1), freed: make(chan struct{}, 1), slots: make(chan struct{}, opts.Workers),
		saves: saver{store: store}}
	w.Loop = lifecycle.NewLoop("automations delivery worker", logger, w.Run)
	return w
}

// Wake makes the worker look for due deliveries now (new ones were
// added); it never blocks.
func (w *Worker) Wake() { signal(w.wake) }

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Run claims and attempts deliveries until ctx ends, then waits for the
// attempts in flight (each bounded by the request timeout).
func (w *Worker) Run(ctx context.Context) error {
	ticker := time.NewTicker(w.opts.PollInterval)
	defer ticker.Stop()
	defer w.inflight.Wait()
	for {
		if full := w.claim(ctx); full {
			continue // every free slot was filled: more may be due
		}
		if !w.waitForWork(ctx, ticker.C) {
			return nil
		}
	}
}

// waitForWork waits until a claim is worth its write: deliveries were
// added, the poll interval passed, or half the slots are free again (a
// claim per finished attempt would cost a write per delivery). It
// returns false when ctx ends.
func (w *Worker) waitForWork(ctx context.Context, tick <-chan time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-w.wake:
			return true
		case <-tick:
			return true
		case <-w.freed:
			if free := cap(w.slots) - len(w.slots); 2*free >= cap(w.slots) {
				return true
			}
		}
	}
}

// claim leases as many due deliveries as there are free slots and starts
// them; it reports whether it filled every free slot.
func (w *Worker) claim(ctx context.Context) bool {
	free := cap(w.slots) - len(w.slots)
	if free == 0 || ctx.Err() != nil {
		return false
	}
	ds, err := w.store.ClaimDeliveries(ctx, w.opts.Owner, w.now().UTC(), w.opts.Lease, free)
	if err != nil {
		if ctx.Err() == nil {
			w.logger.Warn("automations: claiming due deliveries failed; they stay due and are claimed again within automations.poll_interval; if it repeats, check the store", "err", err)
		}
		return false
	}
	for _, d := range ds {
		w.slots <- struct{}{}
		w.inflight.Add(1)
		go func() {
			defer func() { <-w.slots; w.inflight.Done(); signal(w.freed) }()
			// An attempt in flight finishes even when ctx ends: it is
			// bounded by the request timeout, and abandoning it would
			// leave the delivery leased until the lease ran out.
			w.Attempt(context.WithoutCancel(ctx), d)
		}()
	}
	return len(ds) == free
}

// Attempt makes one attempt of a claimed delivery and records it.
func (w *Worker) Attempt(ctx context.Context, d storage.Delivery) {
	hook, out := w.send(ctx, d)
	now := w.now().UTC()
	d = w.apply(d, out, now)
	if err := w.saves.save(ctx, d); err != nil {
		// The lease runs out and the delivery is attempted again:
		// at-least-once.
		w.logger.Warn("automations: recording a delivery attempt failed; the delivery is attempted again once its lease runs out (the endpoint may get it twice); if it repeats, check the store", "delivery", d.ID, "err", err)
	}
	if out.requested {
		w.health(ctx, hook, out, now)
	}
}

// send prepares the request from the delivery and its webhook and sends
// it; a webhook that is gone or disabled fails the delivery for good.
func (w *Worker) send(ctx context.Context, d storage.Delivery) (storage.Webhook, outcome) {
	c := w.hooks.get(ctx, w.store, w.box, d.Entity, d.WebhookID, w.now())
	hook := c.hook
	switch {
	case errors.Is(c.err, storage.ErrNotFound) && hook.ID == "":
		return hook, outcome{permanent: true, reason: "webhook " + d.WebhookID + " was deleted"}
	case c.err != nil:
		return hook, outcome{reason: c.err.Error()}
	case hook.DisabledAt != nil:
		return hook, outcome{permanent: true, reason: "webhook " + hook.Name + " is disabled: " + hook.DisabledReason}
	}
	body, err := w.box.Open(d.Body, BodyContext(d.ID))
	if err != nil {
		return hook, outcome{reason: "payload: " + err.Error()}
	}
	resp := w.sender.Send(ctx, Request{ID: d.ID, URL: hook.URL, Body: body, Token: c.token, Secret: c.secret})
	return hook, classify(resp, w.now())
}
