package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// tokenSummaries are summaries whose totals the stored column must hold
// as the readers' expression reads them.
var tokenSummaries = []string{
	``,
	`{}`,
	`{"usage":{}}`,
	`{"usage":null}`,
	`{"usage":{"gpt-4o":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}}`,
	`{"usage":{"gpt-4o":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":0}}}`,
	`{"usage":{"gpt-4o":{"input_tokens":7,"output_tokens":3,"prompt_tokens":1}}}`,
	`{"usage":{"gpt-4o":{"requests":1}}}`,
	`{"usage":{"a":{"total_tokens":100},"b":{"prompt_tokens":2,"output_tokens":3}}}`,
	`{"usage":{"a":{"prompt_tokens":"12","completion_tokens":"x"}}}`,
	`{"usage":{"a":{"total_tokens":9007199254740993},"b":{"total_tokens":4}}}`,
	`{"usage":"lots"}`,
	`{"usage":{"a":{"total_tokens":1},"a":{"total_tokens":7}}}`,
	`{"usage":{"a":{"prompt_tokens":1.5,"completion_tokens":2.25}}}`,
	`{"usage":{"a":[1,2]}}`,
}

// checkStoredTokens fails unless every call's total_tokens is what the
// readers' expression computes from its summary.
func checkStoredTokens(t *testing.T, s *Store) {
	t.Helper()
	rows, err := s.db.Query("SELECT id, total_tokens, " + sqlgen.TotalTokensSQL(sqlgen.DuckDB{}, "c") + " FROM calls c ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var stored, want sql.NullFloat64
		if err := rows.Scan(&id, &stored, &want); err != nil {
			t.Fatal(err)
		}
		if stored != want {
			t.Errorf("call %s: stored total_tokens %v, the readers' total %v", id, stored, want)
		}
		n++
	}
	if err := rows.Err(); err != nil || n == 0 {
		t.Fatalf("checked %d calls: %v", n, err)
	}
}

// TestStoredTokensAreTheReadersTotals: whether a call arrives whole, as
// a start then an end, or an end then a start, its stored token total is
// the readers' total of its summary, and so after a store written before
// the column is opened.
func TestStoredTokensAreTheReadersTotals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Second)
	for i, summary := range tokenSummaries {
		for _, order := range []string{"whole", "start-end", "end-start"} {
			c := storage.Call{ProjectID: "e/p", ID: fmt.Sprintf("%s-%02d", order, i), TraceID: "t", OpName: "op", StartedAt: t0,
				EndedAt: &t1}
			if summary != "" {
				c.Summary = json.RawMessage(summary)
			}
			start, end := c, c
			end.StartedAt, start.EndedAt, start.Summary = time.Time{}, nil, nil
			parts := map[string][]storage.CallPart{
				"whole":     {{Kind: storage.PartComplete, Call: c}},
				"start-end": {{Kind: storage.PartStart, Call: start}, {Kind: storage.PartEnd, Call: end}},
				"end-start": {{Kind: storage.PartEnd, Call: end}, {Kind: storage.PartStart, Call: start}},
			}[order]
			for _, p := range parts {
				if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: &p}}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	checkStoredTokens(t, s)

	// As a store written before the column: no totals, and for some rows
	// no typed usage either.
	for _, stmt := range []string{"UPDATE calls SET total_tokens = NULL", "UPDATE calls SET usage_models = NULL WHERE id LIKE 'whole-%'",
		"DELETE FROM calls_columns_filled"} {
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
	defer s.Close()
	checkStoredTokens(t, s)
	var typed int
	if err := s.db.QueryRow("SELECT count(*) FROM calls WHERE total_tokens IS NOT NULL").Scan(&typed); err != nil || typed < 3*8 {
		t.Fatalf("%d calls have a total after filling, %v", typed, err)
	}
}
