package chfront

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

func TestCompressionMethods(t *testing.T) {
	db := NewTestDatabase(t, StartForTest(t))
	tests := []struct {
		name     string
		method   clickhouse.CompressionMethod
		settings clickhouse.Settings
	}{
		{name: "none", method: clickhouse.CompressionNone},
		{name: "lz4", method: clickhouse.CompressionLZ4},
		{name: "zstd", method: clickhouse.CompressionZSTD},
		{name: "gzip", method: clickhouse.CompressionGZIP, settings: clickhouse.Settings{"enable_http_compression": 1}},
		{name: "deflate", method: clickhouse.CompressionDeflate, settings: clickhouse.Settings{"enable_http_compression": 1}},
		{name: "brotli", method: clickhouse.CompressionBrotli, settings: clickhouse.Settings{"enable_http_compression": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := open(t, db, func(o *clickhouse.Options) {
				o.Compression = &clickhouse.Compression{Method: tc.method}
				o.Settings = tc.settings
			})
			roundTrip(t, conn, "compressed_"+tc.name)
		})
	}
}

// roundTrip inserts 5000 rows into a new table and checks aggregates of them.
func roundTrip(t *testing.T, conn driver.Conn, table string) {
	t.Helper()
	ctx := testContext(t)
	if err := conn.Exec(ctx, "CREATE TABLE "+table+" (n UInt64, s String) ENGINE = MergeTree ORDER BY n"); err != nil {
		t.Fatal(err)
	}
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+table)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		if err := batch.Append(uint64(i), fmt.Sprintf("row %d with some repetitive text text text", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	var sum uint64
	var longest string
	if err := conn.QueryRow(ctx, "SELECT sum(n), max(s) FROM "+table).Scan(&sum, &longest); err != nil {
		t.Fatal(err)
	}
	if sum != 4999*5000/2 || longest != "row 999 with some repetitive text text text" {
		t.Fatalf("sum %d max %q after round trip", sum, longest)
	}
}

func TestSettings(t *testing.T) {
	db := NewTestDatabase(t, StartForTest(t))
	conn := open(t, db, func(o *clickhouse.Options) {
		o.Settings = clickhouse.Settings{"max_block_size": 4321}
	})
	ctx := testContext(t)
	tests := []struct {
		name    string
		ctx     context.Context
		setting string
		want    string
	}{
		{"connection level", ctx, "max_block_size", "4321"},
		{"query level", clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"max_threads": 3})), "max_threads", "3"},
		{"query level string", clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"format_csv_delimiter": ";"})), "format_csv_delimiter", ";"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if err := conn.QueryRow(tc.ctx, "SELECT toString(getSetting({name:String}))", clickhouse.Named("name", tc.setting)).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.setting, got, tc.want)
			}
		})
	}
	t.Run("does not leak into the next query", func(t *testing.T) {
		plain := open(t, db)
		var got string
		if err := plain.QueryRow(ctx, "SELECT toString(getSetting('max_block_size'))").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got == "4321" {
			t.Fatal("a connection-level setting of another client leaked into this query")
		}
	})
}

func TestMoreColumnTypes(t *testing.T) {
	conn := open(t, NewTestDatabase(t, StartForTest(t)))
	ctx := testContext(t)
	t.Run("map and low cardinality", func(t *testing.T) {
		var m map[string]string
		var lc string
		if err := conn.QueryRow(ctx, "SELECT map('a', 'b', 'c', 'd'), toLowCardinality('x')").Scan(&m, &lc); err != nil {
			t.Fatal(err)
		}
		if len(m) != 2 || m["a"] != "b" || m["c"] != "d" || lc != "x" {
			t.Fatalf("got %v %q", m, lc)
		}
	})
	t.Run("native JSON path", func(t *testing.T) {
		var model string
		if err := conn.QueryRow(ctx, `SELECT toString(j.usage.model) FROM (SELECT '{"usage":{"model":"gpt"}}'::JSON AS j)`).Scan(&model); err != nil {
			t.Fatal(err)
		}
		if model != "gpt" {
			t.Fatalf("model = %q", model)
		}
	})
	t.Run("time zone of DateTime64", func(t *testing.T) {
		var ts time.Time
		if err := conn.QueryRow(ctx, "SELECT toDateTime64('2026-03-04 05:06:07.123456', 6, 'UTC')").Scan(&ts); err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC); !ts.Equal(want) {
			t.Fatalf("got %v, want %v", ts, want)
		}
	})
}

func TestDatabaseSQL(t *testing.T) {
	srv := StartForTest(t)
	db := clickhouse.OpenDB(&clickhouse.Options{
		Addr: []string{srv.Addr()}, Protocol: clickhouse.HTTP,
		Auth: clickhouse.Auth{Database: NewTestDatabase(t, srv)},
	})
	defer db.Close()
	ctx := testContext(t)
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE kv (k String, v Int64) ENGINE = MergeTree ORDER BY k"); err != nil {
		t.Fatal(err)
	}
	insertWithTx(t, db, 100)
	var n, sum int64
	if err := db.QueryRowContext(ctx, "SELECT count(), sum(v) FROM kv WHERE k != ?", "none").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 100 || sum != 99*100/2 {
		t.Fatalf("count %d sum %d, want 100 and 4950", n, sum)
	}
}

func insertWithTx(t *testing.T, db *sql.DB, rows int) {
	t.Helper()
	ctx := testContext(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO kv")
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if _, err := stmt.ExecContext(ctx, fmt.Sprintf("k%d", i), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
