package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/storage/duckdb"
)

// A database DuckDB has invalidated refuses all work until it is opened
// again, so the server stops with an error (a supervisor starts it again
// and the write-ahead log replays) instead of answering 503 for ever.
func TestServeStopsWhenTheStoreFailsForGood(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.OTLPGRPCListen = "127.0.0.1:0", ""
	srv, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	conn, err := srv.store.(*duckdb.Store).DB().Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "SET debug_checkpoint_abort = 'before_header'"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "FORCE CHECKPOINT"); err == nil || !strings.Contains(err.Error(), "checkpoint_abort") {
		t.Fatalf("the checkpoint was not aborted: %v", err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "must be opened again") {
			t.Fatalf("Serve = %v, want the store's failure", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve went on with an invalidated database")
	}
}
