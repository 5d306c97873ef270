package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

func tableRows(n int) []json.RawMessage {
	rows := make([]json.RawMessage, n)
	for i := range rows {
		rows[i] = json.RawMessage(fmt.Sprintf(`{"i": %d}`, i))
	}
	return rows
}

// TestTablesResentReadEachRowOnce: a re-sent table stores its rows again
// until a merge collapses them; no read may depend on that merge.
func TestTablesResentReadEachRowOnce(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	// The duplicates must stay unmerged for the test to mean anything: a
	// background merge could otherwise collapse them before the count.
	if err := s.conn.Exec(ctx, "SYSTEM STOP MERGES table_rows"); err != nil {
		t.Fatal(err)
	}
	const n = lookupChunk + 200
	req := storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: "e/p", Rows: tableRows(n)}}
	var tbl storage.TableCreateRes
	for range 2 {
		var err error
		if tbl, err = s.CreateTable(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	var stored uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM table_rows").Scan(&stored); err != nil || stored != 2*n {
		t.Fatalf("%d row copies stored (%v); the test needs the unmerged duplicates", stored, err)
	}
	ghost := strings.Repeat("G", 43)
	long := append(slices.Clone(tbl.RowDigests), ghost) // too long to narrow the read with
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name  string
		req   storage.TableQueryReq
		first int64
		count int
	}{
		{"natural page", storage.TableQueryReq{Offset: i64(n - 5)}, n - 5, 5},
		{"short filter", storage.TableQueryReq{Filter: &storage.TableRowFilter{RowDigests: []string{tbl.RowDigests[7], ghost}}}, 7, 1},
		{"long filter", storage.TableQueryReq{Filter: &storage.TableRowFilter{RowDigests: long}, Offset: i64(3), Limit: i64(2)}, 3, 2},
		{"sorted", storage.TableQueryReq{SortBy: []storage.SortBy{{Field: "i", Direction: "desc"}}}, n - 1, n},
	}
	for _, tt := range tests {
		tt.req.ProjectID, tt.req.Digest = "e/p", tbl.Digest
		res, err := s.QueryTable(ctx, tt.req)
		if err != nil || len(res.Rows) != tt.count || res.Rows[0].OriginalIndex != tt.first {
			t.Errorf("%s: %d rows from %v, %v; want %d from %d", tt.name, len(res.Rows), firstIndex(res.Rows), err, tt.count, tt.first)
		}
	}
	checkTableSize(t, s, tbl.Digest, req.Table.Rows)
}

// checkTableSize compares the stats of a table with the rows it was made of.
func checkTableSize(t *testing.T, s *Store, digest string, rows []json.RawMessage) {
	t.Helper()
	stats, err := s.QueryTableStatsBatch(context.Background(), storage.TableQueryStatsBatchReq{ProjectID: "e/p",
		Digests: []string{digest}, IncludeStorageSize: true})
	var want int64
	for _, r := range rows {
		want += int64(len(r))
	}
	if err != nil || len(stats.Tables) != 1 || stats.Tables[0].Count != int64(len(rows)) || *stats.Tables[0].StorageSizeBytes != want {
		t.Fatalf("stats %+v, %v; want %d rows of %d bytes", stats, err, len(rows), want)
	}
}

func firstIndex(rows []storage.TableRowSchema) any {
	if len(rows) == 0 {
		return "none"
	}
	return rows[0].OriginalIndex
}
