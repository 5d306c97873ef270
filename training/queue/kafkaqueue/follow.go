package kafkaqueue

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"
	"golang.org/x/sync/errgroup"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/queue"
)

// Run follows the command log until ctx ends: it applies every command
// to this replica's machine, answers the ones submitted here, ticks
// while leases run, and writes snapshots.
func (q *Queue) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return q.follow(ctx) })
	g.Go(func() error { return q.tick(ctx) })
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (q *Queue) follow(ctx context.Context) error {
	m := q.start
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: q.o.Kafka.Brokers, Topic: q.o.Topic, Partition: 0,
		Dialer:   &kafka.Dialer{Timeout: q.o.Kafka.DialTimeout, ClientID: q.o.Kafka.ClientID, DualStack: true},
		MinBytes: 1, MaxBytes: q.o.Kafka.Consumer.FetchMaxBytes, MaxWait: q.o.Kafka.Consumer.FetchMaxWait,
		OffsetOutOfRangeError: true, ReadLagInterval: -1, ErrorLogger: q.logger.KafkaErrorLogger("training commands reader")})
	defer r.Close()
	if err := r.SetOffset(m.Position() + 1); err != nil {
		return err
	}
	snap := newSnapshotter(q.o, m.Position())
	defer snap.wait()
	for {
		// A quiet log still gets its snapshot: the fetch gives up now
		// and then to let the snapshotter look.
		fctx, cancel := context.WithTimeout(ctx, q.o.SnapshotEvery)
		msg, err := r.FetchMessage(fctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, kafka.OffsetOutOfRange):
			return err
		case errors.Is(err, context.DeadlineExceeded):
		case err != nil:
			q.logger.Log(slog.LevelWarn, "fetch", "training commands: fetch failed; retrying at once; if it repeats, check that the brokers in kafka_brokers are up and reachable", "err", err)
			continue
		default:
			q.apply(m, msg)
		}
		snap.maybe(ctx, m)
	}
}

// apply applies one record at its offset.
func (q *Queue) apply(m *jobs.Machine, msg kafka.Message) {
	cmd, err := Decode(msg.Value)
	if err != nil {
		// Every replica skips it alike; the position still moves.
		q.logger.Log(slog.LevelWarn, "decode", "training commands: a record is no training command; every replica skips it; check what else writes to training.commands_topic", "offset", msg.Offset, "err", err)
		m.Apply(msg.Offset, jobs.Command{Kind: jobs.KindPing})
		return
	}
	r := m.Apply(msg.Offset, cmd)
	if cmd.Kind != jobs.KindAppend && cmd.Kind != jobs.KindCheckpoint {
		var next int64
		if end, ok := m.EarliestLeaseEnd(); ok {
			next = end.UnixNano()
		}
		q.nextEnd.Store(next)
	}
	q.answer(cmd.ID, r)
	if queue.Queues(r) {
		q.wake.Broadcast()
	}
}

// tick submits a tick once a lease has ended by this replica's clock, so
// some replica's tick ends it in the log's order.
func (q *Queue) tick(ctx context.Context) error {
	t := time.NewTicker(q.o.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if end := q.nextEnd.Load(); end != 0 && q.o.Now().UnixNano() > end {
			if _, err := q.Submit(ctx, jobs.Command{Kind: jobs.KindTick}); err != nil && ctx.Err() == nil {
				q.logger.Log(slog.LevelWarn, "tick", "training commands: a tick failed; retried at the next tick; if it repeats, check that the brokers in kafka_brokers are up", "err", err)
			}
		}
	}
}

// snapshotter writes the machine's state now and then, off the follow
// loop, one write at a time.
type snapshotter struct {
	o       Options
	last    int64
	lastAt  time.Time
	writing chan struct{}
}

func newSnapshotter(o Options, pos int64) *snapshotter {
	return &snapshotter{o: o, last: pos, lastAt: o.Now(), writing: make(chan struct{}, 1)}
}

// maybe writes a snapshot when commands were applied since the last one
// and SnapshotEvery has passed, unless a write is still going on.
func (s *snapshotter) maybe(ctx context.Context, m *jobs.Machine) {
	if m.Position() == s.last || s.o.Now().Sub(s.lastAt) < s.o.SnapshotEvery {
		return
	}
	select {
	case s.writing <- struct{}{}:
	default:
		return
	}
	pos, state, open := m.Position(), m.Snapshot(), m.Open()
	s.last, s.lastAt = pos, s.o.Now()
	go func() {
		defer func() { <-s.writing }()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		// The open rows first, repairing any a submitter could not store;
		// then the snapshot that lets a replica start after pos.
		err := s.o.Store.SaveTrainingJobs(wctx, open, nil)
		if err == nil {
			err = s.o.Store.SaveQueueSnapshot(wctx, storage.QueueSnapshot{Position: pos, State: state, CreatedAt: s.o.Now()})
		}
		if err != nil {
			s.o.Logger.Warn("training commands: writing a snapshot failed; the next one will try again (training.snapshot_interval); if it repeats, check the store", "position", pos, "err", err)
		}
	}()
}

// wait lets a snapshot being written finish.
func (s *snapshotter) wait() { s.writing <- struct{}{} }
