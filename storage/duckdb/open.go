package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strings"

	duckdbdriver "github.com/duckdb/duckdb-go/v2"
)

// catalog is the name the main database file is attached under, the one a
// plain open of weft.duckdb would give it.
const catalog = "weft"

// callsCatalog holds the calls table, in its own file (CallsFileName) so
// that its writes can skip DuckDB's write-ahead log while every other
// table keeps it (see Options.CallsUnlogged and docs/adr/0017).
const callsCatalog = "weft_calls"

// CallsFileName is the calls database file inside the data directory.
const CallsFileName = "calls.duckdb"

// rowGroupRows is the size of the row groups DuckDB writes from now on
// (its default is 122,880). A row group is the unit DuckDB's per-block
// time bounds skip, so it is what a read of one call by id scans: at the
// default that was 5-10 ms on a store of 10M calls, most of it comparing
// ids. Smaller groups cost some compression on wide scans; ingest was no
// slower. Row groups already in a file keep their size.
const rowGroupRows = 16384

// callsStorageVersion is the calls file's format: the first that
// compresses text with zstd. Attaching a file of an older format upgrades
// it, after which a build on DuckDB before 1.5 cannot open it.
const callsStorageVersion = "v1.5.0"

// openDB opens the database files in dir, or in-memory databases when dir
// is empty. The files are attached to an in-memory instance, because only
// ATTACH takes the row group size and the recovery mode; every pooled
// connection then uses the main file as its default catalog and finds the
// calls table through its search path.
func openDB(dir string, callsUnlogged bool) (*sql.DB, error) {
	mainPath, callsPath := ":memory:", ":memory:"
	if dir != "" {
		mainPath, callsPath = filepath.Join(dir, FileName), filepath.Join(dir, CallsFileName)
	}
	mainOpts := fmt.Sprintf("ROW_GROUP_SIZE %d", rowGroupRows)
	callsOpts := mainOpts + ", STORAGE_VERSION '" + callsStorageVersion + "'"
	if callsUnlogged {
		callsOpts += ", RECOVERY_MODE no_wal_writes"
	}
	init := []string{
		attachSQL(mainPath, catalog, mainOpts),
		attachSQL(callsPath, callsCatalog, callsOpts),
		"USE " + catalog,
		searchPathSQL,
	}
	connector, err := duckdbdriver.NewConnector("", func(ex driver.ExecerContext) error {
		for _, stmt := range init {
			if _, err := ex.ExecContext(context.Background(), stmt, nil); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open duckdb in %q: %w", dir, err)
	}
	return sql.OpenDB(connector), nil
}

// searchPathSQL lets unqualified names find the calls table. USE resets
// the search path, so whatever runs USE runs this after it.
const searchPathSQL = "SET search_path = '" + catalog + ".main," + callsCatalog + ".main'"

func attachSQL(path, name, options string) string {
	return fmt.Sprintf("ATTACH IF NOT EXISTS '%s' AS %s (%s)", strings.ReplaceAll(path, "'", "''"), name, options)
}

// detach checkpoints and closes both database files before the instance
// closes: DuckDB 1.5 otherwise finished closing them after Close had
// returned, still removing the main file's log while a caller (a test's
// cleanup, a backup) already used the directory.
func (s *Store) detach() error {
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("close duckdb: %w", err)
	}
	defer conn.Close()
	for _, stmt := range []string{"USE memory", "DETACH " + callsCatalog, "DETACH " + catalog} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("close duckdb: %s: %w", stmt, err)
		}
	}
	return nil
}
