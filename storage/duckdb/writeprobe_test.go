package duckdb

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// The probe tells a record the store refuses (one too large for DuckDB's
// memory limit) from a store that takes no writes (an invalidated
// database), and leaves nothing behind.
func TestProbeWritesTellsARefusedRecordFromAFailedStore(t *testing.T) {
	ctx := context.Background()
	s, err := OpenWithOptions(ctx, t.TempDir(), Options{CallsUnlogged: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.ProbeWrites(ctx); err != nil {
		t.Fatalf("probe on a working store: %v", err)
	}
	var rows int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM calls").Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("the probe left %d rows (%v)", rows, err)
	}

	if _, err := s.db.ExecContext(ctx, "SET GLOBAL memory_limit = '16MiB'"); err != nil {
		t.Fatal(err)
	}
	big := storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: "big",
		OpName: "op", StartedAt: time.Now(), Inputs: json.RawMessage(`"` + strings.Repeat("x", 32<<20) + `"`)}}}
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{big}); err == nil {
		t.Fatal("a 32 MiB record was stored under a 16 MiB memory limit; the test proves nothing")
	}
	if err := s.ProbeWrites(ctx); err != nil {
		t.Fatalf("probe after the store refused a record: %v", err)
	}

	if _, err := s.db.ExecContext(ctx, "SET GLOBAL memory_limit = '256MiB'"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "SET GLOBAL debug_checkpoint_abort = 'before_header'"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "FORCE CHECKPOINT"); err == nil || !strings.Contains(err.Error(), "checkpoint_abort") {
		t.Fatalf("the checkpoint was not aborted: %v", err)
	}
	if err := s.ProbeWrites(ctx); err == nil || !strings.Contains(err.Error(), invalidatedText) {
		t.Fatalf("probe on an invalidated database = %v, want it to fail", err)
	}
}
