package storekit

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// fakeTree is a call forest: parent by id; deleted ids are not live.
type fakeTree struct {
	parent  map[string]string
	deleted map[string]bool
}

func (f fakeTree) LiveCalls(_ context.Context, _ string, ids []string) ([]string, error) {
	var out []string
	for _, id := range ids {
		if _, ok := f.parent[id]; ok && !f.deleted[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

func (f fakeTree) LiveChildren(_ context.Context, _ string, parents []string) ([]string, error) {
	var out []string
	for id, p := range f.parent {
		if slices.Contains(parents, p) && !f.deleted[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

func TestCallsToDelete(t *testing.T) {
	tree := fakeTree{parent: map[string]string{"r": "", "k1": "r", "k2": "r", "g": "k1", "x": "", "dead": "r", "under-dead": "dead"},
		deleted: map[string]bool{"dead": true}}
	for _, tc := range []struct {
		name string
		ids  []string
		want []string
	}{
		{"nothing", nil, nil},
		{"root takes its live descendants", []string{"r"}, []string{"r", "k1", "k2", "g"}},
		{"unknown and repeated ids count once or not at all", []string{"x", "nope", "x"}, []string{"x"}},
		{"a deleted call and what hangs below it", []string{"dead"}, nil},
		{"ancestor and descendant both named", []string{"g", "k1"}, []string{"g", "k1"}},
	} {
		got, err := CallsToDelete(context.Background(), tree, &storage.CallDelete{ProjectID: "e/p", IDs: tc.ids})
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, want)
		}
	}
}

func TestDeleteStamp(t *testing.T) {
	now := func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 678901234, time.FixedZone("x", 3600)) }
	for _, tc := range []struct {
		name string
		at   time.Time
		want time.Time
	}{
		{"unset is now", time.Time{}, time.Date(2025, 1, 2, 2, 4, 5, 678000000, time.UTC)},
		{"given, to the millisecond", time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC), time.Date(2024, 5, 6, 7, 8, 9, 123000000, time.UTC)},
	} {
		if got := DeleteStamp(tc.at, now); !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("%s: DeleteStamp = %v; want %v", tc.name, got, tc.want)
		}
	}
}
