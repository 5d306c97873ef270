package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// runRetentionChanges: changes come back per project, oldest first, each
// as it was made.
func runRetentionChanges(t *testing.T, s storage.RetentionStore) {
	ctx := context.Background()
	at := time.Date(2025, 4, 1, 10, 0, 0, 123000, time.UTC)
	made := []storage.RetentionChange{
		{ProjectID: "acme/b", Days: 30, At: at, By: "u1"},
		{ProjectID: "acme/a", Days: 0, At: at.Add(time.Hour), By: "u2"},
		{ProjectID: "acme/a", Days: 7, At: at, By: "u1"},
	}
	for _, c := range made {
		if err := s.AddRetentionChange(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RetentionChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.RetentionChange{made[2], made[1], made[0]}
	if len(got) != len(want) {
		t.Fatalf("changes %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i].ProjectID != want[i].ProjectID || got[i].Days != want[i].Days || !got[i].At.Equal(want[i].At) || got[i].By != want[i].By {
			t.Errorf("change %d = %+v; want %+v", i, got[i], want[i])
		}
	}
}
