package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"golang.org/x/sync/errgroup"
)

// TestStmtCacheStaysBoundedAndAnswersUnderEviction runs more distinct
// statements than the cache holds from several goroutines at once, so
// statements are evicted while others start on them: every query must
// answer correctly, and the cache must end at its limit.
func TestStmtCacheStaysBoundedAndAnswersUnderEviction(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := newStmtCache(db, 4)
	var g errgroup.Group
	for w := range 8 {
		g.Go(func() error {
			for i := range 200 {
				if err := queryOne(c, (w+i)%11, i); err != nil { // 11 texts over a cache of 4
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := c.lru.Len(); got != 4 || len(c.byText) != 4 {
		t.Fatalf("cache holds %d statements (%d by text), want its limit 4", got, len(c.byText))
	}
	c.close()
	if c.lru.Len() != 0 {
		t.Fatalf("%d statements left after close", c.lru.Len())
	}
}

// queryOne runs statement n of the test with argument i, reading its
// rows after the statement may have been evicted.
func queryOne(c *stmtCache, n, i int) error {
	rows, err := c.QueryContext(context.Background(), fmt.Sprintf("SELECT %d + $1::INTEGER AS v", n), i)
	if err != nil {
		return err
	}
	defer rows.Close()
	var v int
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if v != n+i {
		return fmt.Errorf("statement %d with %d: %d", n, i, v)
	}
	return nil
}
