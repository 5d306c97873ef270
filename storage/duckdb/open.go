package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	duckdbdriver "github.com/duckdb/duckdb-go/v2"
)

// catalog is the name the database file is attached under, the one a
// plain open of weft.duckdb would give it.
const catalog = "weft"

// rowGroupRows is the size of the row groups DuckDB writes from now on
// (its default is 122,880). A row group is the unit DuckDB's per-block
// time bounds skip, so it is what a read of one call by id scans: at the
// default that was 5-10 ms on a store of 10M calls, most of it comparing
// ids. Smaller groups cost some compression on wide scans; ingest was no
// slower. Row groups already in a file keep their size.
const rowGroupRows = 16384

// openDB opens the database file at path, or an in-memory database when
// path is empty. A file is attached to an in-memory instance, because
// only ATTACH takes the row group size; every pooled connection then uses
// it as its default catalog.
func openDB(path string) (*sql.DB, error) {
	if path == "" {
		return sql.Open("duckdb", "")
	}
	attach := fmt.Sprintf("ATTACH IF NOT EXISTS '%s' AS %s (ROW_GROUP_SIZE %d)",
		strings.ReplaceAll(path, "'", "''"), catalog, rowGroupRows)
	connector, err := duckdbdriver.NewConnector("", func(ex driver.ExecerContext) error {
		for _, stmt := range []string{attach, "USE " + catalog} {
			if _, err := ex.ExecContext(context.Background(), stmt, nil); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open duckdb %q: %w", path, err)
	}
	return sql.OpenDB(connector), nil
}
