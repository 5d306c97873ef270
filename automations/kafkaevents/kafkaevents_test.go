package kafkaevents

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/internal/kafkatest"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

var at = time.Date(2025, 5, 6, 7, 8, 9, 123456000, time.UTC)

func event(id, project, alias string) storage.ArtifactEvent {
	return storage.ArtifactEvent{ID: id, Type: storage.EventAddArtifactAlias, ProjectID: project, Collection: "clf",
		VersionIndex: 2, Digest: "d", Aliases: []string{alias}, Author: "u", Metadata: json.RawMessage(`{"a":1}`), At: at}
}

func TestEncodeRoundTrip(t *testing.T) {
	e := event("e1", "acme/p", "prod")
	e.Source = "weave:///acme/q/object/m:x"
	raw, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(raw)
	if err != nil || !reflect.DeepEqual(back, e) {
		t.Fatalf("round trip = %+v, %v; want %+v", back, err, e)
	}
	for _, bad := range []string{`{`, `{"v":2,"id":"x","project_id":"p","type":"t"}`, `{"v":1}`, `[]`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) accepted", bad)
		}
	}
}

// FuzzDecode: any record value decodes or is refused, never panics, and
// what decodes encodes back to an equal event.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(event("e1", "acme/p", "prod"))
	f.Add(good)
	f.Add([]byte(`{"v":1,"id":"x","project_id":"p","type":"t","metadata":null,"at":"2025-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		e, err := Decode(value)
		if err != nil {
			return
		}
		raw, err := Encode(e)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if _, err := Decode(raw); err != nil {
			t.Fatalf("re-encoded record %s does not decode: %v", raw, err)
		}
	})
}

// TestConsumerDispatchesOnce produces events and a record that is no
// event; the consumer stores the matching event's delivery, sets the bad
// record aside, and a consumer started later adds nothing again.
func TestConsumerDispatchesOnce(t *testing.T) {
	ctx := context.Background()
	brokers := kafkatest.Start(t).Addrs()
	cfg := kafkatest.Config(brokers, "weft.automation-events")
	logger := slog.New(slog.DiscardHandler)
	if err := EnsureTopic(ctx, cfg, "weft.automation-events", logger); err != nil {
		t.Fatal(err)
	}
	store, box := seededStore(t)
	p := NewProducer(cfg, "weft.automation-events", logger)
	defer p.Close()
	if err := p.RecordEvents(ctx, []storage.ArtifactEvent{event("e1", "acme/p", "prod"), event("e2", "acme/p", "dev")}); err != nil {
		t.Fatal(err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: "weft.automation-events", Transport: cfg.Transport(),
		Balancer: kafka.Murmur2Balancer{Consistent: true}} // the producer's: same key, same partition
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte("acme/p"), Value: []byte("not an event")}); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	disp := automations.NewDispatcher(store, box, 1<<20, time.Now)
	woken := make(chan struct{}, 10)
	stop := run(NewConsumer(cfg, "weft.automation-events", "g", disp, store, func() { woken <- struct{}{} }, logger))
	letter := readOne(t, brokers, DeadLetterTopic("weft.automation-events"))
	if string(letter.Value) != "not an event" || len(letter.Headers) == 0 {
		t.Fatalf("dead letter %q headers %v", letter.Value, letter.Headers)
	}
	stop(t) // the bad record came last: everything before it is dispatched
	ds, _ := store.ListDeliveries(ctx, "acme/p", "au1", 10)
	if len(ds) != 1 || ds[0].ID != automations.DeliveryID("e1", "au1") || len(woken) == 0 {
		t.Fatalf("deliveries %v (worker woken %d times); want the one of e1", ds, len(woken))
	}
	stop = run(NewConsumer(cfg, "weft.automation-events", "g", disp, store, func() {}, logger))
	time.Sleep(2 * time.Second)
	stop(t)
	if ds, _ := store.ListDeliveries(ctx, "acme/p", "au1", 10); len(ds) != 1 {
		t.Fatalf("a second consumer of the group added deliveries: %d", len(ds))
	}
}

// run starts c and returns the function that stops it.
func run(c *Consumer) func(*testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- c.Run(ctx) }()
	return func(t *testing.T) {
		cancel()
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
	}
}

// readOne reads the first record of topic, waiting up to 20s.
func readOne(t *testing.T, brokers []string, topic string) kafka.Message {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, GroupID: "reader", StartOffset: kafka.FirstOffset,
		MaxWait: 100 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := r.ReadMessage(ctx)
	if err != nil {
		t.Fatalf("reading %s: %v", topic, err)
	}
	return m
}

func seededStore(t *testing.T) (*duckdb.Store, *secretbox.Box) {
	t.Helper()
	ctx := context.Background()
	store, err := duckdb.Open(ctx, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	box, _ := secretbox.New(bytes.Repeat([]byte{5}, secretbox.KeyBytes))
	sealed, _ := box.Seal([]byte("k"), delivery.SecretContext("acme", "SIGN"))
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, err := range []error{
		store.PutSecret(ctx, storage.Secret{Entity: "acme", Name: "SIGN", Sealed: sealed, CreatedAt: now, UpdatedAt: now}),
		store.CreateWebhook(ctx, storage.Webhook{Entity: "acme", ID: "wh1", Name: "ci", URL: "https://example.com", SigningSecret: "SIGN", CreatedAt: now, UpdatedAt: now}),
		store.CreateAutomation(ctx, storage.Automation{ProjectID: "acme/p", ID: "au1", Name: "a", Scope: "project",
			Event: storage.EventAddArtifactAlias, AliasRegex: "^prod$", WebhookID: "wh1", Payload: `{"a":"${alias}"}`, Enabled: true, CreatedAt: now, UpdatedAt: now}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return store, box
}
