package duckdb

import (
	"strings"
	"testing"
	"time"
)

func TestWatchdogReportsAnInvalidatedDatabaseOnce(t *testing.T) {
	s := openTestStore(t)
	s.stopWatchdog()
	s.startWatchdog(10 * time.Millisecond)
	select {
	case err := <-s.Failed():
		t.Fatalf("a working database reported as failed: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := s.db.Exec("SET GLOBAL debug_checkpoint_abort = 'before_header'"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("FORCE CHECKPOINT"); err == nil || !strings.Contains(err.Error(), "checkpoint_abort") {
		t.Fatalf("the checkpoint was not aborted: %v", err)
	}
	select {
	case err := <-s.Failed():
		if err == nil {
			t.Fatal("failure reported without its error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the invalidated database was not reported")
	}
	if err, open := <-s.Failed(); open || err != nil {
		t.Fatalf("reported twice: %v", err)
	}
}
