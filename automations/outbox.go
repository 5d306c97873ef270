package automations

import (
	"context"
	"log/slog"
	"time"

	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/storage"
)

// OutboxStore is the store's event outbox and what dispatching reads.
type OutboxStore interface {
	storage.EventOutbox
	DispatchStore
}

// outboxBatch is the most events dispatched in one transaction.
const outboxBatch = 200

// maxOutboxBackoff bounds the pause after a failed dispatch.
const maxOutboxBackoff = time.Minute

// Outbox is the event sink when no Kafka topic carries events: events go
// into the store's outbox, and Run moves them into deliveries, removing
// them in the transaction that adds the deliveries, so an event is
// dispatched at least once and its deliveries are made once.
type Outbox struct {
	// Loop runs Run between Start and Shutdown: the outbox is a
	// component of the process.
	*lifecycle.Loop
	store      OutboxStore
	disp       *Dispatcher
	wakeWorker func()
	wake       chan struct{}
	poll       time.Duration
	logger     *slog.Logger
}

// NewOutbox builds the outbox; wakeWorker is told when deliveries were
// added.
func NewOutbox(store OutboxStore, disp *Dispatcher, wakeWorker func(), poll time.Duration, logger *slog.Logger) *Outbox {
	o := &Outbox{store: store, disp: disp, wakeWorker: wakeWorker, wake: make(chan struct{}, 1), poll: poll, logger: logger}
	o.Loop = lifecycle.NewLoop("automations outbox", logger, o.Run)
	return o
}

// RecordEvents implements EventSink.
func (o *Outbox) RecordEvents(ctx context.Context, events []storage.ArtifactEvent) error {
	if len(events) == 0 {
		return nil
	}
	if err := o.store.RecordEvents(ctx, events); err != nil {
		return err
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return nil
}

// Run dispatches recorded events until ctx ends: at once when events are
// recorded here, and every poll interval for events recorded before a
// restart. Failures are retried with a growing pause.
func (o *Outbox) Run(ctx context.Context) error {
	pause := o.poll
	for {
		n, err := o.DispatchOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			o.logger.Warn("automations: dispatching events failed; they stay recorded and are retried after retry_in; if it repeats, check the store", "err", err, "retry_in", pause)
			pause = min(2*pause, maxOutboxBackoff)
		case err == nil:
			pause = o.poll
			if n == outboxBatch {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-o.wake:
		case <-time.After(pause):
		}
	}
}

// DispatchOnce dispatches up to one batch of events and reports how many.
func (o *Outbox) DispatchOnce(ctx context.Context) (int, error) {
	events, err := o.store.PendingEvents(ctx, outboxBatch)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	ds, err := o.disp.Deliveries(ctx, events)
	if err != nil {
		return 0, err
	}
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	if err := o.store.DispatchEvents(ctx, ids, ds); err != nil {
		return 0, err
	}
	if len(ds) > 0 {
		o.wakeWorker()
	}
	return len(events), nil
}
