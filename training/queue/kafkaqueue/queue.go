// Package kafkaqueue is the training job queue of a scale-out
// deployment: every command goes into one Kafka partition, and every
// replica follows that partition and applies the commands to its own
// copy of the state machine (package training/jobs). The partition's
// order is the only arbiter: a lease is granted by the first lease
// command that finds the job queued, in an order every replica sees
// alike, so two workers can never hold one job, whichever replicas they
// talk to, without any compare-and-set in ClickHouse. The replica that
// submitted a command answers it once its own copy has applied it and
// the changes are stored (rows carry the command's offset as their
// version, so any replica may write them, in any order).
//
// A replica starts from the latest snapshot in storage and replays the
// partition after it; replicas write snapshots as they go. See
// docs/adr/0014-training-job-queue.md.
//
// It must never import HTTP code or storage backends.
package kafkaqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/queue"
)

// Options configure a Queue.
type Options struct {
	Kafka kafkabase.Config
	// Topic is the command log; it has one partition.
	Topic string
	Store queue.Store
	// Tick is how often ended leases are looked for.
	Tick time.Duration
	// SnapshotEvery is how often a replica that applied commands since
	// its last snapshot writes one.
	SnapshotEvery time.Duration
	Now           func() time.Time
	Logger        *slog.Logger
}

// Queue is one replica's view of the shared queue.
type Queue struct {
	// Loop follows the log (Run) between Start and Shutdown, then closes
	// the writer: the queue is a component of the process.
	*lifecycle.Loop
	o       Options
	w       *kafka.Writer
	start   *jobs.Machine // the state to follow from; Run owns it
	mu      sync.Mutex
	waiters map[string]chan jobs.Result
	wake    *queue.Notifier
	// nextEnd is the earliest running lease's end (UnixNano; 0: none),
	// which the ticker reads.
	nextEnd atomic.Int64
	logger  *kafkabase.LimitedLogger
}

// New creates the topic when configured to, loads the latest snapshot
// and checks that the log still holds every command after it.
func New(ctx context.Context, o Options) (*Queue, error) {
	if o.Kafka.CreateTopics {
		if err := kafkabase.EnsureTopic(ctx, o.Kafka, o.Topic, 1, o.Logger); err != nil {
			return nil, err
		}
	}
	m, err := loadSnapshot(ctx, o.Store)
	if err != nil {
		return nil, err
	}
	if err := checkLogStart(ctx, o, m.Position()); err != nil {
		return nil, err
	}
	w := &kafka.Writer{Addr: kafka.TCP(o.Kafka.Brokers...), Topic: o.Topic, Balancer: partitionZero{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, MaxAttempts: 3,
		ReadTimeout: o.Kafka.RequestTimeout, WriteTimeout: o.Kafka.RequestTimeout, Transport: o.Kafka.Transport(),
		ErrorLogger: kafkabase.NewLimitedLogger(o.Logger).KafkaErrorLogger("training commands")}
	q := &Queue{o: o, w: w, start: m, waiters: map[string]chan jobs.Result{}, wake: queue.NewNotifier(),
		logger: kafkabase.NewLimitedLogger(o.Logger)}
	q.Loop = lifecycle.NewLoop("training job queue", o.Logger, q.Run, lifecycle.WithCloser(q.Close))
	return q, nil
}

// storeTimeout bounds storing one command's changes.
const storeTimeout = 30 * time.Second

// partitionZero puts every record on partition 0: one total order.
type partitionZero struct{}

func (partitionZero) Balance(kafka.Message, ...int) int { return 0 }

// loadSnapshot is the machine of the latest snapshot, or an empty one
// before the log's first command.
func loadSnapshot(ctx context.Context, store queue.Store) (*jobs.Machine, error) {
	snap, err := store.LatestQueueSnapshot(ctx)
	if errors.Is(err, storage.ErrNotFound) {
		return jobs.Restore(nil, nil, -1, time.Time{}), nil
	}
	if err != nil {
		return nil, queue.Unavailable("loading the training queue snapshot", err)
	}
	return jobs.DecodeSnapshot(snap.State)
}

// checkLogStart refuses to start when retention has already dropped
// commands after the snapshot: the state could not be rebuilt.
func checkLogStart(ctx context.Context, o Options, pos int64) error {
	client := &kafka.Client{Addr: kafka.TCP(o.Kafka.Brokers...), Timeout: o.Kafka.RequestTimeout, Transport: o.Kafka.Transport()}
	res, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{o.Topic: {kafka.FirstOffsetOf(0)}}})
	if err != nil {
		return queue.Unavailable("reading the training command log's offsets", err)
	}
	parts := res.Topics[o.Topic]
	if len(parts) == 0 || parts[0].Error != nil {
		return fmt.Errorf("training command log %s has no partition 0; create the topic (kafka.create_topics) first", o.Topic)
	}
	if first := parts[0].FirstOffset; first > pos+1 {
		return fmt.Errorf("training command log %s starts at offset %d but the latest snapshot is at %d: commands in between "+
			"were deleted by retention; raise the topic's retention.ms and restore the training tables from a backup", o.Topic, first, pos)
	}
	return nil
}

// Submit implements queue.Sequencer: the command goes into the log, and
// the answer is this replica's copy applying it, once its changes are
// stored.
func (q *Queue) Submit(ctx context.Context, cmd jobs.Command) (jobs.Result, error) {
	cmd = queue.Prepare(cmd, q.o.Now())
	value, err := Encode(cmd)
	if err != nil {
		return jobs.Result{}, err
	}
	if len(value) > q.o.Kafka.MaxMessageBytes {
		return jobs.Result{}, fmt.Errorf("the command is %d bytes, more than kafka.max_message_bytes (%d); send fewer events at once: %w",
			len(value), q.o.Kafka.MaxMessageBytes, storage.ErrTooLarge)
	}
	ch := q.await(cmd.ID)
	defer q.forget(cmd.ID)
	ctx, cancel := context.WithTimeout(ctx, q.o.Kafka.Producer.AckTimeout)
	defer cancel()
	if err := q.w.WriteMessages(ctx, kafka.Message{Value: value}); err != nil {
		return jobs.Result{}, queue.Unavailable("kafka did not take the training command", err)
	}
	var r jobs.Result
	select {
	case r = <-ch:
	case <-ctx.Done():
		return jobs.Result{}, queue.Unavailable("waiting for the training command log", ctx.Err())
	}
	// Stored even if the client has gone: the command is in the log.
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer scancel()
	if err := q.o.Store.SaveTrainingJobs(sctx, r.Changes.Jobs, r.Changes.Events); err != nil {
		return jobs.Result{}, queue.Unavailable("storing training job changes", err)
	}
	return r, nil
}

func (q *Queue) await(id string) chan jobs.Result {
	ch := make(chan jobs.Result, 1)
	q.mu.Lock()
	q.waiters[id] = ch
	q.mu.Unlock()
	return ch
}

func (q *Queue) forget(id string) {
	q.mu.Lock()
	delete(q.waiters, id)
	q.mu.Unlock()
}

// answer hands a result to the command's submitter, if it waits here.
func (q *Queue) answer(id string, r jobs.Result) {
	q.mu.Lock()
	ch := q.waiters[id]
	delete(q.waiters, id)
	q.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// Wake implements queue.Sequencer.
func (q *Queue) Wake() <-chan struct{} { return q.wake.Wait() }

// Check implements queue.Sequencer.
func (q *Queue) Check(ctx context.Context) error { return queue.Check(ctx, q) }

// Close closes the producer.
func (q *Queue) Close() error { return kafkabase.CloseWriter(q.w) }

var _ queue.Sequencer = (*Queue)(nil)
