package delivery

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/automations/egress"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

var ctx = context.Background()

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// rig is a worker over a real DuckDB store, sending to real local
// receivers, on a clock the test moves.
type rig struct {
	store  *duckdb.Store
	box    *secretbox.Box
	clock  *clock
	worker *Worker
}

var testPolicy = Policy{Initial: time.Second, Max: time.Minute, MaxElapsed: time.Hour,
	Rand: func(n int64) int64 { return n - 1 }} // no jitter: the full pause

func newRig(t *testing.T, timeout time.Duration) *rig {
	t.Helper()
	store, err := duckdb.Open(ctx, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	box, err := secretbox.New(bytes.Repeat([]byte{3}, secretbox.KeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	client := egress.NewClient(egress.NewGuard(loopback), egress.ClientOptions{Timeout: timeout})
	sender := NewSender(client, 1024, "weft-test", time.Now)
	opts := Options{Owner: "w1", Workers: 4, Lease: time.Minute, PollInterval: 20 * time.Millisecond,
		DisableAfter: 24 * time.Hour, Policy: testPolicy}
	return &rig{store: store, box: box, clock: c, worker: NewWorker(store, box, sender, opts, slog.New(slog.DiscardHandler), c.Now)}
}

// webhook stores a webhook to url with a signing secret and a token.
func (r *rig) webhook(t *testing.T, id, url string) storage.Webhook {
	t.Helper()
	for name, value := range map[string]string{"SIGN": "sign-secret", "TOKEN": "tok-123"} {
		sealed, err := r.box.Seal([]byte(value), SecretContext("acme", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.store.PutSecret(ctx, storage.Secret{Entity: "acme", Name: name, Sealed: sealed,
			CreatedAt: r.clock.Now(), UpdatedAt: r.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	w := storage.Webhook{Entity: "acme", ID: id, Name: id, URL: url, AccessTokenSecret: "TOKEN", SigningSecret: "SIGN",
		CreatedAt: r.clock.Now(), UpdatedAt: r.clock.Now()}
	if err := r.store.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	return w
}

// delivery stores a pending delivery of body to webhook, due now.
func (r *rig) delivery(t *testing.T, id, webhookID, body string) {
	t.Helper()
	sealed, err := r.box.Seal([]byte(body), BodyContext(id))
	if err != nil {
		t.Fatal(err)
	}
	now := r.clock.Now()
	d := storage.Delivery{ID: id, ProjectID: "acme/p", AutomationID: "a1", Entity: "acme", WebhookID: webhookID,
		EventID: "e-" + id, EventType: storage.EventLinkArtifact, Body: sealed, Preview: body,
		State: storage.DeliveryPending, NextAttemptAt: now, RetryFrom: now, CreatedAt: now, UpdatedAt: now}
	if err := r.store.AddDeliveries(ctx, []storage.Delivery{d}); err != nil {
		t.Fatal(err)
	}
}

// runDue attempts every delivery due on the rig's clock, synchronously.
func (r *rig) runDue(t *testing.T) int {
	t.Helper()
	ds, err := r.store.ClaimDeliveries(ctx, "w1", r.clock.Now(), time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		r.worker.Attempt(ctx, d)
	}
	return len(ds)
}

// get reads a delivery back.
func (r *rig) get(t *testing.T, id string) storage.Delivery {
	t.Helper()
	d, err := r.store.GetDelivery(ctx, "acme/p", id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// receiver records requests and answers with answer(n) for the n-th.
type receiver struct {
	mu   sync.Mutex
	reqs []recorded
	srv  *httptest.Server
}

type recorded struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, recorded{header: r.Header.Clone(), body: body.Bytes()})
		n := len(rc.reqs)
		rc.mu.Unlock()
		answer(n, w)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]recorded(nil), rc.reqs...)
}
