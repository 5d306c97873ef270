package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestCreateFeedbackFullBatch: a whole /feedback/batch/create (1000 rows)
// is stored in one transaction within the default memory limit, where
// one INSERT a row ran out of memory at 835; of two rows with the same id
// the later one wins.
func TestCreateFeedbackFullBatch(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	at := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]storage.Feedback, 1000)
	for i := range rows {
		rows[i] = storage.Feedback{ID: fmt.Sprintf("f%04d", i), ProjectID: "acme/p", WeaveRef: fmt.Sprintf("weave:///acme/p/call/c%d", i),
			WBUserID: "u", CreatedAt: at, FeedbackType: "note",
			Payload: json.RawMessage(fmt.Sprintf(`{"note":%q}`, strings.Repeat("x", 400)+fmt.Sprint(i)))}
	}
	rows[999].ID = "f0000" // the same id as the first: the later row wins
	if err := s.CreateFeedback(ctx, rows); err != nil {
		t.Fatal(err)
	}
	var n int
	var ref string
	if err := s.db.QueryRowContext(ctx, "SELECT count(*), max(weave_ref) FILTER (WHERE id = 'f0000') FROM feedback").Scan(&n, &ref); err != nil {
		t.Fatal(err)
	}
	if n != 999 || ref != "weave:///acme/p/call/c999" {
		t.Errorf("stored %d rows, f0000 on %s; want 999 rows and the later row's ref", n, ref)
	}
}

// TestSpillsInsideTheDataDir: what outgrows memory spills under the data
// directory, never into the directory the process started in.
func TestSpillsInsideTheDataDir(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got string
	if err := s.db.QueryRowContext(context.Background(), "SELECT current_setting('temp_directory')").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != spillDir(dir) {
		t.Errorf("temp_directory %q; want %q", got, spillDir(dir))
	}
}
