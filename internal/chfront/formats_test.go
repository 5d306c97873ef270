package chfront

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

func TestInsertFormatQueryFormatAndAsyncInsert(t *testing.T) {
	conn := open(t, NewTestDatabase(t, StartForTest(t)))
	ctx := testContext(t)
	if err := conn.Exec(ctx, "CREATE TABLE logs (n UInt32, msg String) ENGINE = MergeTree ORDER BY n"); err != nil {
		t.Fatal(err)
	}
	data := "{\"n\":1,\"msg\":\"a\"}\n\n{\"n\":2,\"msg\":\"b\"}\n"
	if err := conn.InsertFormat(ctx, "JSONEachRow", "INSERT INTO logs", strings.NewReader(data)); err != nil {
		t.Fatalf("InsertFormat: %v", err)
	}
	if err := conn.AsyncInsert(ctx, "INSERT INTO logs VALUES (3, 'c')", true); err != nil {
		t.Fatalf("AsyncInsert: %v", err)
	}
	rc, err := conn.QueryFormat(ctx, "CSV", "SELECT n, msg FROM logs ORDER BY n")
	if err != nil {
		t.Fatalf("QueryFormat: %v", err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1,\"a\"\n2,\"b\"\n3,\"c\"\n"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestConcurrentWritersAndReaders runs batch inserts and queries side by
// side, as a storage layer under load does.
func TestConcurrentWritersAndReaders(t *testing.T) {
	conn := open(t, NewTestDatabase(t, StartForTest(t)), func(o *clickhouse.Options) { o.MaxOpenConns = 8 })
	ctx := testContext(t)
	if err := conn.Exec(ctx, "CREATE TABLE spans (w UInt8, i UInt32) ENGINE = MergeTree ORDER BY (w, i)"); err != nil {
		t.Fatal(err)
	}
	const writers, batches, rows = 3, 4, 1000
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				if err := insertSpans(ctx, conn, w, b, rows); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for range batches {
				var n uint64
				if err := conn.QueryRow(ctx, "SELECT count() FROM spans").Scan(&n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM spans").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != writers*batches*rows {
		t.Fatalf("count = %d, want %d", n, writers*batches*rows)
	}
}

func insertSpans(ctx context.Context, conn driver.Conn, w, b, rows int) error {
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO spans")
	if err != nil {
		return fmt.Errorf("writer %d: %w", w, err)
	}
	for i := range rows {
		if err := batch.Append(uint8(w), uint32(b*rows+i)); err != nil {
			return err
		}
	}
	return batch.Send()
}
