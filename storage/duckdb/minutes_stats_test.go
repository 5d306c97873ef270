package duckdb

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestRollupsBeforeTheStatsColumnsAreRedone: minutes rolled up before
// the rollups kept each model's entries and cache sums are marked dirty
// once when the store opens, so charts and statistics read them right
// from the calls until the refresher rolls them up again.
func TestRollupsBeforeTheStatsColumnsAreRedone(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	s, err := Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s.stopMinutesRefresher()
	rollupWorkload(t, s, t0, 11)
	if _, err := s.refreshMinutes(ctx, 1<<20); err != nil {
		t.Fatal(err)
	}
	q := storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/p"}, Start: t0, End: t0.Add(time.Hour), BucketSeconds: 600}
	want, err := s.aggregateByScan(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// As rollups written before the columns: NULL in every row, no note.
	for _, stmt := range []string{
		"UPDATE call_minute_usage SET entries = NULL, cache_read_tokens = NULL, cache_creation_tokens = NULL",
		"DELETE FROM calls_columns_filled WHERE column_name = '" + minuteStatsColumns + "'",
	} {
		if _, err := s.db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, dir, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.stopMinutesRefresher()
	var dirty int
	if err := s.db.QueryRow("SELECT count(DISTINCT minute) FROM call_minutes_dirty").Scan(&dirty); err != nil {
		t.Fatal(err)
	}
	if dirty < 30 {
		t.Fatalf("%d minutes dirty after opening, want every minute of the workload's half hour", dirty)
	}
	got, err := s.AggregateCalls(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	sameCharts(t, "after opening", got, want)
	if _, err := s.refreshMinutes(ctx, 1<<20); err != nil {
		t.Fatal(err)
	}
	if got, err = s.AggregateCalls(ctx, q); err != nil {
		t.Fatal(err)
	}
	sameCharts(t, "rolled up again", got, want)
}
