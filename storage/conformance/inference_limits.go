package conformance

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// runInferenceLimits checks the gateway's shared rate counts and the
// stored limits.
func runInferenceLimits(t *testing.T, newStore func(t *testing.T) storage.InferenceLimitsStore) {
	t.Run("RateCountsSumOtherReplicas", func(t *testing.T) { testRateCounts(t, newStore(t)) })
	t.Run("LimitsDocument", func(t *testing.T) { testInferenceLimitsDoc(t, newStore(t)) })
}

func testRateCounts(t *testing.T, s storage.InferenceLimitsStore) {
	// Windows near now: a store may expire counts an hour old.
	w0 := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	w1 := w0.Add(time.Minute)
	must(t, s.PublishRateCounts(bg, []storage.RateCount{
		{Scope: "project:acme/app", Window: w0, Replica: "a", Requests: 5, Tokens: 500},
		{Scope: "project:acme/app", Window: w1, Replica: "a", Requests: 1, Tokens: 10},
		{Scope: "key:k1", Window: w1, Replica: "a", Requests: 2, Tokens: 20},
	}))
	must(t, s.PublishRateCounts(bg, []storage.RateCount{
		{Scope: "project:acme/app", Window: w1, Replica: "b", Requests: 3, Tokens: 30},
	}))
	// A replica publishes its running count again: it replaces, not adds.
	must(t, s.PublishRateCounts(bg, []storage.RateCount{
		{Scope: "project:acme/app", Window: w1, Replica: "a", Requests: 4, Tokens: 40},
	}))
	got, err := s.RateCounts(bg, w1, "", 100)
	must(t, err)
	want := []storage.RateCount{
		{Scope: "key:k1", Window: w1, Requests: 2, Tokens: 20},
		{Scope: "project:acme/app", Window: w1, Requests: 7, Tokens: 70},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("every replica's counts since %s = %+v\nwant %+v", w1, got, want)
	}
	got, err = s.RateCounts(bg, w0, "a", 100)
	must(t, err)
	want = []storage.RateCount{{Scope: "project:acme/app", Window: w1, Requests: 3, Tokens: 30}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("counts of replicas but a = %+v\nwant %+v", got, want)
	}
	if got, err = s.RateCounts(bg, w0, "", 1); err != nil || len(got) != 1 {
		t.Fatalf("limit 1: %+v, %v", got, err)
	}
}

func testInferenceLimitsDoc(t *testing.T, s storage.InferenceLimitsStore) {
	if _, err := s.InferenceLimits(bg); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("limits never set: err = %v, want ErrNotFound", err)
	}
	first := storage.InferenceLimits{Doc: []byte(`{"limits":[{"project":"acme/app","requests_per_minute":600}]}`), UpdatedAt: base, UpdatedBy: "u1"}
	must(t, s.PutInferenceLimits(bg, first))
	second := storage.InferenceLimits{Doc: []byte(`{"budgets":[{"project":"acme/app","usd_per_day":25}]}`), UpdatedAt: base.Add(time.Minute), UpdatedBy: "u2"}
	must(t, s.PutInferenceLimits(bg, second))
	got, err := s.InferenceLimits(bg)
	must(t, err)
	if string(got.Doc) != string(second.Doc) || !got.UpdatedAt.Equal(second.UpdatedAt) || got.UpdatedBy != "u2" {
		t.Fatalf("limits = %s at %s by %s, want the last put", got.Doc, got.UpdatedAt, got.UpdatedBy)
	}
	must(t, s.DeleteInferenceLimits(bg))
	if _, err := s.InferenceLimits(bg); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("limits after reset: err = %v, want ErrNotFound", err)
	}
	must(t, s.PutInferenceLimits(bg, first))
	if got, err = s.InferenceLimits(bg); err != nil || string(got.Doc) != string(first.Doc) {
		t.Fatalf("limits set again after a reset = %s, %v", got.Doc, err)
	}
}
