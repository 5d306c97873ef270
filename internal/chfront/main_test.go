package chfront

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/internal/chdb"
)

func TestMain(m *testing.M) { os.Exit(RunTests(m)) }

// open connects clickhouse-go over HTTP to the shared server, in db.
func open(t *testing.T, db string, mods ...func(*clickhouse.Options)) driver.Conn {
	t.Helper()
	srv := StartForTest(t)
	opts := &clickhouse.Options{
		Addr:        []string{srv.Addr()},
		Protocol:    clickhouse.HTTP,
		Auth:        clickhouse.Auth{Database: db},
		DialTimeout: 5 * time.Second,
	}
	for _, m := range mods {
		m(opts)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func chdbQuery(sql string) chdb.Query { return chdb.Query{SQL: sql} }
