package sqlgen

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestSortBoundPagesAgree: a page sorted by latency or tokens and read with the
// bound CallsSortBound gives (as the DuckDB store reads it) holds the same
// calls in the same order as the page read whole, in both directions,
// with ties across the bound, running calls (no latency) and offsets
// that reach past the calls that have one.
func TestSortBoundPagesAgree(t *testing.T) {
	db := openDB(t)
	var calls []call
	for i := range 60 {
		c := call{id: fmt.Sprintf("c%02d", i), started: at(time.Duration(i) * time.Second)}
		if i%7 != 3 { // every seventh call still runs
			c.ended = ptrTime(c.started.Add(time.Duration(i%5) * 10 * time.Millisecond))               // five latencies: ties
			c.summary = fmt.Sprintf(`{"usage":{"m":{"prompt_tokens":%d,"completion_tokens":1}}}`, i%4) // four totals: ties
		}
		calls = append(calls, c)
	}
	calls = append(calls, call{project: "e/other", id: "x", started: at(0), ended: ptrTime(at(time.Hour))})
	insertCalls(t, db, calls)
	d := NewDuckDB()
	for _, field := range []string{"summary.weave.latency_ms", "summary.weave.total_tokens"} {
		for _, dir := range []string{"desc", "asc"} {
			for _, page := range []struct{ limit, offset int64 }{{1, 0}, {5, 0}, {10, 3}, {12, 0}, {50, 0}, {10, 48}, {20, 55}} {
				q := storage.CallsQuery{ProjectID: "e/p", SortBy: sortBy(field, dir), Limit: page.limit, Offset: page.offset}
				t.Run(fmt.Sprintf("%s %s limit %d offset %d", field, dir, page.limit, page.offset), func(t *testing.T) {
					whole := pageKeyIDs(t, db, d, q)
					st, ok, err := CallsSortBound(d, q)
					if err != nil || !ok {
						t.Fatalf("CallsSortBound = %v, %v", ok, err)
					}
					var bound sql.NullFloat64
					if err := db.QueryRow(st.SQL, st.Args...).Scan(&bound); err != nil && err != sql.ErrNoRows {
						t.Fatal(err)
					}
					ended := int64(len(calls) - 1 - (len(calls)-1+3)/7)
					if want := page.limit+page.offset <= ended; bound.Valid != want {
						t.Fatalf("bound found %v, want %v (%d calls have a latency)", bound.Valid, want, ended)
					}
					if !bound.Valid {
						return
					}
					if got := pageKeyIDs(t, db, d, q, SortBound(bound.Float64)); !slices.Equal(got, whole) {
						t.Fatalf("bounded page %v, whole %v (bound %v)", got, whole, bound.Float64)
					}
				})
			}
		}
	}
	t.Run("not bounded", func(t *testing.T) {
		for _, q := range []storage.CallsQuery{
			{ProjectID: "e/p", SortBy: sortBy("summary.weave.latency_ms", "desc")}, // no limit
			{ProjectID: "e/p", SortBy: sortBy("started_at", "desc"), Limit: 10},
			{ProjectID: "e/p", SortBy: sortBy("summary.weave.cost", "desc"), Limit: 10},
		} {
			if _, ok, err := CallsSortBound(d, q); ok || err != nil {
				t.Errorf("CallsSortBound(%v) = %v, %v; want not bounded", q.SortBy, ok, err)
			}
			st, err := CallsPageKeys(d, q, SortBound(0))
			if err != nil {
				t.Fatal(err)
			}
			if unbounded, _ := CallsPageKeys(d, q); st.SQL != unbounded.SQL {
				t.Errorf("SortBound changed a query it does not apply to: %s", st.SQL)
			}
		}
	})
}

func pageKeyIDs(t *testing.T, db *sql.DB, d Dialect, q storage.CallsQuery, opts ...CallsOption) []string {
	t.Helper()
	st, err := CallsPageKeys(d, q, opts...)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(st.SQL, st.Args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		var started sql.NullTime
		var key int64
		if err := rows.Scan(&id, &started, &key); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestSortBoundKeepsTheColumnsType: the bound is compared with the
// stored column in the column's own type; a BIGINT latency compared with
// a DOUBLE is cast row by row, and DuckDB then skips no block by it.
func TestSortBoundKeepsTheColumnsType(t *testing.T) {
	d := NewDuckDB()
	for field, want := range map[string]string{
		"summary.weave.latency_ms":   "c.latency_ms >= CAST($2 AS BIGINT)",
		"summary.weave.total_tokens": "c.total_tokens >= CAST($2 AS DOUBLE)",
	} {
		q := storage.CallsQuery{ProjectID: "e/p", SortBy: sortBy(field, "desc"), Limit: 10}
		st, err := CallsPageKeys(d, q, SortBound(1234))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(st.SQL, want) {
			t.Errorf("%s: bounded keys do not hold %q:\n%s", field, want, st.SQL)
		}
	}
}
