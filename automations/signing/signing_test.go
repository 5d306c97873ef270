package signing

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// Known-answer vectors: the seed platform's docs script (key
// my-webhook-secret) and the Standard Webhooks reference library's test.
func TestKnownAnswers(t *testing.T) {
	if got, want := ServiceSignature("my-webhook-secret", []byte(`{"event_type":"ADD_ARTIFACT_ALIAS"}`)),
		"wnT0cvW/VDkH8q04UlGelM5VkBSWx+On72C46syFyJ8="; got != want {
		t.Errorf("ServiceSignature = %s, want %s", got, want)
	}
	got := StandardSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("StandardSignature = %s, want %s", got, want)
	}
}

func TestSignHeaders(t *testing.T) {
	body := []byte(`{"a":1}`)
	ts := time.Unix(1700000000, 0)
	h := http.Header{}
	Sign(h, "", "dlv_1", ts, body)
	if h.Get(HeaderID) != "dlv_1" || h.Get(HeaderTimestamp) != "1700000000" {
		t.Fatalf("id/timestamp headers: %v", h)
	}
	if h.Get(HeaderServiceSignature) != "" || h.Get(HeaderSignature) != "" {
		t.Fatalf("signatures sent without a secret: %v", h)
	}
	Sign(h, "k", "dlv_1", ts, body)
	if err := VerifyService("k", body, h.Get(HeaderServiceSignature)); err != nil {
		t.Fatal(err)
	}
	if err := VerifyStandard("k", h, body, ts, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyStandard(t *testing.T) {
	body := []byte(`{"a":1}`)
	ts := time.Unix(1700000000, 0)
	signed := func(mut func(h http.Header)) http.Header {
		h := http.Header{}
		Sign(h, "secret", "dlv_1", ts, body)
		mut(h)
		return h
	}
	tests := []struct {
		name string
		h    http.Header
		now  time.Time
		want error
	}{
		{"valid", signed(func(http.Header) {}), ts, nil},
		{"within tolerance", signed(func(http.Header) {}), ts.Add(4 * time.Minute), nil},
		{"too old", signed(func(http.Header) {}), ts.Add(6 * time.Minute), ErrTooOld},
		{"too new", signed(func(http.Header) {}), ts.Add(-6 * time.Minute), ErrTooNew},
		{"missing id", signed(func(h http.Header) { h.Del(HeaderID) }), ts, ErrMissingHeader},
		{"missing signature", signed(func(h http.Header) { h.Del(HeaderSignature) }), ts, ErrMissingHeader},
		{"other id", signed(func(h http.Header) { h.Set(HeaderID, "dlv_2") }), ts, ErrBadSignature},
		{"several, one valid (rotation)", signed(func(h http.Header) {
			h.Set(HeaderSignature, "v1,Zm9v "+h.Get(HeaderSignature))
		}), ts, nil},
		{"wrong signature", signed(func(h http.Header) { h.Set(HeaderSignature, "v1,Zm9v") }), ts, ErrBadSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := VerifyStandard("secret", tc.h, body, tc.now, 5*time.Minute); !errors.Is(err, tc.want) {
				t.Fatalf("VerifyStandard = %v, want %v", err, tc.want)
			}
		})
	}
	if err := VerifyService("secret", []byte(`{"a":2}`), signed(func(http.Header) {}).Get(HeaderServiceSignature)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a changed body verified: %v", err)
	}
}
