package delivery

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/automations/egress"
	"github.com/weftdev/weft/storage"
)

func TestSlowReceiverTimesOut(t *testing.T) {
	r := newRig(t, 300*time.Millisecond)
	release := make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { <-release })
	defer close(release)
	r.webhook(t, "wh1", rc.srv.URL)
	r.delivery(t, "dlv_1", "wh1", `{}`)
	start := time.Now()
	r.runDue(t)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the attempt took %s; the timeout is 300ms", took)
	}
	d := r.get(t, "dlv_1")
	if d.State != storage.DeliveryPending || d.LastStatus != 0 || !strings.Contains(d.LastError, "timed out") {
		t.Fatalf("state %s status %d reason %q; want pending, no status, timed out", d.State, d.LastStatus, d.LastError)
	}
}

func TestGivesUpAfterMaxElapsed(t *testing.T) {
	r := newRig(t, 5*time.Second)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) })
	r.webhook(t, "wh1", rc.srv.URL)
	r.delivery(t, "dlv_1", "wh1", `{}`)
	for range 100 {
		r.runDue(t)
		if d := r.get(t, "dlv_1"); d.State != storage.DeliveryPending {
			break
		}
		r.clock.Advance(time.Minute) // the policy's longest pause
	}
	d := r.get(t, "dlv_1")
	if d.State != storage.DeliveryFailed || !strings.Contains(d.LastError, "gave up after") {
		t.Fatalf("state %s reason %q; want failed, gave up", d.State, d.LastError)
	}
	// 1+2+4+...+32s, then one a minute: the hour holds about 60 attempts.
	if d.Attempts < 55 || d.Attempts > 65 || len(rc.requests()) != d.Attempts {
		t.Fatalf("%d attempts recorded, %d received; want about 60 and equal", d.Attempts, len(rc.requests()))
	}
}

func TestWebhookDisabledAfterFailingStreak(t *testing.T) {
	r := newRig(t, 5*time.Second)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	r.webhook(t, "wh1", rc.srv.URL)
	r.delivery(t, "dlv_1", "wh1", `{}`)
	r.runDue(t)
	hook, _ := r.store.GetWebhook(ctx, "acme", "wh1")
	if hook.FailingSince == nil || hook.DisabledAt != nil {
		t.Fatalf("after one failure: failing since %v disabled %v", hook.FailingSince, hook.DisabledAt)
	}
	r.clock.Advance(25 * time.Hour) // past DisableAfter (24h)
	r.delivery(t, "dlv_2", "wh1", `{}`)
	r.runDue(t)
	hook, _ = r.store.GetWebhook(ctx, "acme", "wh1")
	if hook.DisabledAt == nil || !strings.Contains(hook.DisabledReason, "every delivery failed since") {
		t.Fatalf("after a day of failures: disabled %v reason %q", hook.DisabledAt, hook.DisabledReason)
	}
	sent := len(rc.requests())
	r.delivery(t, "dlv_3", "wh1", `{}`)
	r.runDue(t)
	d := r.get(t, "dlv_3")
	if d.State != storage.DeliveryFailed || !strings.Contains(d.LastError, "is disabled") || len(rc.requests()) != sent {
		t.Fatalf("delivery to a disabled webhook: state %s reason %q, sent %d more", d.State, d.LastError, len(rc.requests())-sent)
	}
}

func TestSuccessEndsFailingStreak(t *testing.T) {
	r := newRig(t, 5*time.Second)
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	r.webhook(t, "wh1", rc.srv.URL)
	r.delivery(t, "dlv_1", "wh1", `{}`)
	r.runDue(t)
	r.clock.Advance(time.Second)
	r.runDue(t)
	if hook, _ := r.store.GetWebhook(ctx, "acme", "wh1"); hook.FailingSince != nil {
		t.Fatalf("failing since %v after a success", hook.FailingSince)
	}
}

func TestInternalAddressRefused(t *testing.T) {
	r := newRig(t, 5*time.Second)
	r.worker.sender = NewSender(egress.NewClient(egress.NewGuard(nil), egress.ClientOptions{Timeout: time.Second}), 1024, "t", nil)
	rc := newReceiver(t, func(int, http.ResponseWriter) {})
	r.webhook(t, "wh1", rc.srv.URL)
	r.delivery(t, "dlv_1", "wh1", `{}`)
	r.runDue(t)
	d := r.get(t, "dlv_1")
	if len(rc.requests()) != 0 || !strings.Contains(d.LastError, "loopback") || !strings.Contains(d.LastError, "allowed_networks") {
		t.Fatalf("sent %d; reason %q", len(rc.requests()), d.LastError)
	}
}

func TestDeletedWebhookFailsDelivery(t *testing.T) {
	r := newRig(t, 5*time.Second)
	r.delivery(t, "dlv_1", "gone", `{}`)
	r.runDue(t)
	if d := r.get(t, "dlv_1"); d.State != storage.DeliveryFailed || !strings.Contains(d.LastError, "was deleted") {
		t.Fatalf("state %s reason %q", d.State, d.LastError)
	}
}

// TestRunDeliversOnWake runs the worker's loop: a delivery added and
// signalled is sent without waiting for the poll, and Run returns when
// its context ends.
func TestRunDeliversOnWake(t *testing.T) {
	r := newRig(t, 5*time.Second)
	r.worker.opts.PollInterval = time.Hour
	got := make(chan string, 1)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) {})
	r.webhook(t, "wh1", rc.srv.URL)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.worker.Run(runCtx) }()
	r.delivery(t, "dlv_1", "wh1", `{"n":1}`)
	r.worker.Wake()
	go func() {
		for len(rc.requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		got <- rc.requests()[0].header.Get("webhook-id")
	}()
	select {
	case id := <-got:
		if id != "dlv_1" {
			t.Fatalf("webhook-id %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery 10s after Wake")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
