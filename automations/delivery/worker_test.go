package delivery

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/automations/signing"
	"github.com/weftdev/weft/storage"
)

// TestFailsThenSucceeds: a receiver that fails three times, then accepts,
// gets four attempts with one delivery id, one success, correct signatures.
func TestFailsThenSucceeds(t *testing.T) {
	r := newRig(t, 5*time.Second)
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	r.webhook(t, "wh1", rc.srv.URL+"/hook")
	body := `{"event_type":"LINK_ARTIFACT"}`
	r.delivery(t, "dlv_1", "wh1", body)
	wantPauses := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	for i := range 4 {
		if n := r.runDue(t); n != 1 {
			t.Fatalf("round %d attempted %d deliveries, want 1", i, n)
		}
		d := r.get(t, "dlv_1")
		if i < 3 {
			if d.State != storage.DeliveryPending || d.LastStatus != 500 || d.NextAttemptAt.Sub(r.clock.Now()) != wantPauses[i] {
				t.Fatalf("after failure %d: state %s status %d next in %s; want pending, 500, %s",
					i+1, d.State, d.LastStatus, d.NextAttemptAt.Sub(r.clock.Now()), wantPauses[i])
			}
			if r.runDue(t) != 0 {
				t.Fatal("a delivery was attempted before its pause ended")
			}
			r.clock.Advance(wantPauses[i])
		}
	}
	d := r.get(t, "dlv_1")
	if d.State != storage.DeliveryDelivered || d.Attempts != 4 || d.LastStatus != 204 {
		t.Fatalf("final: state %s attempts %d status %d", d.State, d.Attempts, d.LastStatus)
	}
	reqs := rc.requests()
	if len(reqs) != 4 {
		t.Fatalf("receiver saw %d requests, want 4", len(reqs))
	}
	for i, req := range reqs {
		h := req.header
		if h.Get("webhook-id") != "dlv_1" || string(req.body) != body {
			t.Fatalf("attempt %d: id %q body %q", i, h.Get("webhook-id"), req.body)
		}
		if h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "Bearer tok-123" {
			t.Fatalf("attempt %d headers: %v", i, h)
		}
		if err := signing.VerifyService("sign-secret", req.body, h.Get(signing.HeaderServiceSignature)); err != nil {
			t.Fatalf("attempt %d X-Service-Signature: %v", i, err)
		}
		if err := signing.VerifyStandard("sign-secret", h, req.body, time.Now(), time.Minute); err != nil {
			t.Fatalf("attempt %d webhook-signature: %v", i, err)
		}
	}
}

func TestAnswers(t *testing.T) {
	tests := []struct {
		name     string
		answer   func(w http.ResponseWriter, now time.Time)
		state    string
		status   int
		reason   string
		minPause time.Duration
		disabled bool
	}{
		{"redirect not followed", func(w http.ResponseWriter, now time.Time) {
			w.Header().Set("Location", "http://169.254.169.254/")
			w.WriteHeader(http.StatusFound)
		}, storage.DeliveryPending, 302, `302 redirect to "http://169.254.169.254/" not followed`, time.Second, false},
		{"410 disables the webhook", func(w http.ResponseWriter, now time.Time) { w.WriteHeader(http.StatusGone) },
			storage.DeliveryFailed, 410, "410 Gone", 0, true},
		{"429 with Retry-After", func(w http.ResponseWriter, now time.Time) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		}, storage.DeliveryPending, 429, "429 Too Many Requests", 120 * time.Second, false},
		{"503 with a Retry-After date", func(w http.ResponseWriter, now time.Time) {
			w.Header().Set("Retry-After", now.Add(10*time.Minute).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		}, storage.DeliveryPending, 503, "503 Service Unavailable", 9 * time.Minute, false},
		{"answer body capped", func(w http.ResponseWriter, now time.Time) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
		}, storage.DeliveryPending, 400, "400 Bad Request", time.Second, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 5*time.Second)
			rc := newReceiver(t, func(_ int, w http.ResponseWriter) { tc.answer(w, r.clock.Now()) })
			r.webhook(t, "wh1", rc.srv.URL)
			r.delivery(t, "dlv_1", "wh1", `{}`)
			start := r.clock.Now()
			r.runDue(t)
			d := r.get(t, "dlv_1")
			if d.State != tc.state || d.LastStatus != tc.status || !strings.Contains(d.LastError, tc.reason) {
				t.Fatalf("state %s status %d reason %q; want %s %d %q", d.State, d.LastStatus, d.LastError, tc.state, tc.status, tc.reason)
			}
			if tc.state == storage.DeliveryPending && d.NextAttemptAt.Sub(start) < tc.minPause {
				t.Fatalf("next attempt in %s, want at least %s", d.NextAttemptAt.Sub(start), tc.minPause)
			}
			if len(d.LastResponse) > MaxStoredResponse {
				t.Fatalf("stored %d bytes of the answer", len(d.LastResponse))
			}
			hook, _ := r.store.GetWebhook(ctx, "acme", "wh1")
			if (hook.DisabledAt != nil) != tc.disabled {
				t.Fatalf("webhook disabled = %v (%s), want %v", hook.DisabledAt != nil, hook.DisabledReason, tc.disabled)
			}
		})
	}
}
