package duckdb

import (
	"context"
	"log/slog"
	"testing"
)

func TestOptionsReachDuckDB(t *testing.T) {
	tests := []struct {
		name        string
		opts        Options
		wantThreads int64
		wantMemory  string
	}{
		{"defaults", Options{}, int64(DefaultThreads()), "384.0 MiB"},
		{"set", Options{MemoryMB: 128, Threads: 3}, 3, "128.0 MiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := OpenWithOptions(context.Background(), t.TempDir(), tc.opts, slog.Default())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var threads int64
			var memory string
			if err := s.db.QueryRow("SELECT current_setting('threads'), current_setting('memory_limit')").Scan(&threads, &memory); err != nil {
				t.Fatal(err)
			}
			if threads != tc.wantThreads || memory != tc.wantMemory {
				t.Fatalf("threads %d, memory_limit %q; want %d, %q", threads, memory, tc.wantThreads, tc.wantMemory)
			}
		})
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, opts := range []Options{{MemoryMB: 10}, {Threads: -1}} {
		if _, err := OpenWithOptions(context.Background(), t.TempDir(), opts, slog.Default()); err == nil {
			t.Errorf("OpenWithOptions(%+v) opened; want an error", opts)
		}
	}
}
