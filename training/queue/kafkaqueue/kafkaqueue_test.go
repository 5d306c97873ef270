package kafkaqueue

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/chfront"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/kafkatest"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/clickhouse"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/queue"
	"github.com/weftdev/weft/training/queue/queuetest"
)

func TestMain(m *testing.M) { os.Exit(chfront.RunTests(m)) }

// stack is a Kafka cluster and a ClickHouse database shared by replicas.
type stack struct {
	kafka kafkabase.Config
	store *clickhouse.Store
}

func newStack(t *testing.T) stack {
	t.Helper()
	cluster, err := kafkatest.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	srv := chfront.StartForTest(t)
	store, err := clickhouse.Open(context.Background(), srv.URL()+"/"+chfront.NewTestDatabase(t, srv), clickhouse.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := kafkabase.DefaultConfig()
	cfg.Brokers = cluster.Addrs()
	cfg.Consumer.FetchMaxWait = 50 * time.Millisecond
	return stack{kafka: cfg, store: store}
}

// replica starts one weft replica's queue and stops it at the test's end.
func (s stack) replica(t *testing.T) *Queue {
	t.Helper()
	q, err := New(context.Background(), Options{Kafka: s.kafka, Topic: "weft.training-commands", Store: s.store,
		Tick: 20 * time.Millisecond, SnapshotEvery: 50 * time.Millisecond, Now: time.Now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("replica stopped: %v", err)
		}
		q.Close()
	})
	return q
}

func TestTwoReplicasNeverLeaseOneJobTwice(t *testing.T) {
	s := newStack(t)
	a, b := s.replica(t), s.replica(t)
	seqs := []queue.Sequencer{a, b}
	queuetest.CreateJobs(t, seqs, "j", 60)
	held := queuetest.LeaseAll(t, seqs, 6, 60)
	open, _, err := s.store.OpenTrainingJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 60 {
		t.Fatalf("stored %d open jobs, want 60", len(open))
	}
	for _, j := range open {
		if j.Status != storage.JobRunning || j.LeaseID != held[j.ID] {
			t.Fatalf("stored %s: %s under %q, but lease %q was granted", j.ID, j.Status, j.LeaseID, held[j.ID])
		}
	}
}

func TestAReplicaStartsFromTheSnapshotAndAgrees(t *testing.T) {
	s := newStack(t)
	a := s.replica(t)
	queuetest.CreateJobs(t, []queue.Sequencer{a}, "j", 3)
	r, err := a.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w", TTL: time.Minute})
	if err != nil || !r.Granted {
		t.Fatalf("lease: %v %+v", err, r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap, err := s.store.LatestQueueSnapshot(context.Background())
		if err == nil && snap.Position >= r.Job.Version {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot at or after position %d: %+v %v", r.Job.Version, snap, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := s.replica(t)
	hb, err := c.Submit(context.Background(), jobs.Command{Kind: jobs.KindHeartbeat, JobID: r.Job.ID, LeaseID: r.Job.LeaseID, TTL: time.Minute})
	if err != nil || hb.Refusal != nil {
		t.Fatalf("heartbeat through the new replica: %v %+v", err, hb.Refusal)
	}
	next, err := c.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w2", TTL: time.Minute})
	if err != nil || !next.Granted || next.Job.ID != "j001" {
		t.Fatalf("lease through the new replica = %+v, %v; want j001", next, err)
	}
}

func TestAnEndedLeaseIsRequeuedByAnyReplica(t *testing.T) {
	s := newStack(t)
	a, b := s.replica(t), s.replica(t)
	queuetest.CreateJobs(t, []queue.Sequencer{a}, "j", 1)
	wake := b.Wake()
	r, err := a.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w", TTL: 100 * time.Millisecond})
	if err != nil || !r.Granted {
		t.Fatalf("lease: %v %+v", err, r)
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the job was not queued again")
	}
	again, err := b.Submit(context.Background(), jobs.Command{Kind: jobs.KindLease, Entity: "acme", Worker: "w2", TTL: time.Minute})
	if err != nil || !again.Granted || again.Job.Attempts != 2 {
		t.Fatalf("second lease = %+v, %v", again, err)
	}
	old, err := b.Submit(context.Background(), jobs.Command{Kind: jobs.KindHeartbeat, JobID: r.Job.ID, LeaseID: r.Job.LeaseID, TTL: time.Minute})
	if err != nil || old.Refusal == nil || old.Refusal.Code != jobs.LeaseLost {
		t.Fatalf("the first lease's heartbeat = %+v, %v; want lease_lost", old, err)
	}
	if err := a.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	cmd := jobs.Command{ID: "c1", At: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC), Kind: jobs.KindAppend, JobID: "j", LeaseID: "l",
		From: 3, Events: []jobs.NewEvent{{Type: jobs.EventGradientStep, Data: json.RawMessage(`{"loss":1.5}`)}}}
	raw, err := Encode(cmd)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(raw)
	if err != nil || !reflect.DeepEqual(back, cmd) {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	for _, bad := range []string{`{`, `{"v":2,"cmd":{"id":"x","kind":"tick"}}`, `{"v":1}`, `{"v":1,"cmd":{"kind":"tick"}}`, `[]`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) accepted", bad)
		}
	}
}

// FuzzDecode: any record value decodes or is refused, never panics, and
// what decodes applies to a machine without panicking either.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(jobs.Command{ID: "c", Kind: jobs.KindCreate, JobID: "j", ProjectID: "a/p", ModelID: "m"})
	f.Add(good)
	f.Add([]byte(`{"v":1,"cmd":{"id":"x","kind":"lease","entity":"*","ttl":1}}`))
	f.Add([]byte(`{"v":1,"cmd":{"id":"x","kind":"append","job_id":"j","events":[{"type":"a","data":null}]}}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		cmd, err := Decode(value)
		if err != nil {
			return
		}
		m := jobs.New()
		m.Apply(1, jobs.Command{ID: "c0", Kind: jobs.KindCreate, JobID: "j", ProjectID: "a/p", ModelID: "m"})
		m.Apply(2, cmd)
	})
}
