package clickhouse

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationsTable records the applied migrations, one row per file name.
const migrationsTable = "weft_schema_migrations"

// Migrate creates the DSN's database if it is missing and applies every
// embedded migration not yet recorded, in name order, statement by
// statement. Migration files must be idempotent (IF NOT EXISTS), because a
// crash between a file's last statement and its record re-runs the file;
// two processes migrating at once then do the same work twice, harmlessly.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.ensureDatabase(ctx); err != nil {
		return err
	}
	ddl := "CREATE TABLE IF NOT EXISTS " + migrationsTable +
		" (name String, applied_at DateTime64(3, 'UTC')) ENGINE = ReplacingMergeTree(applied_at) ORDER BY name"
	if err := s.conn.Exec(ctx, ddl); err != nil {
		return wrapErr("create "+migrationsTable, err)
	}
	applied, err := s.appliedMigrations(ctx)
	if err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	for _, path := range names {
		name := strings.TrimPrefix(path, "migrations/")
		if applied[name] {
			continue
		}
		if err := s.applyMigration(ctx, path, name); err != nil {
			return err
		}
		s.logger.Info("applied clickhouse migration", "name", name)
	}
	return nil
}

// AppliedMigrations lists the recorded migrations in name order.
func (s *Store) AppliedMigrations(ctx context.Context) ([]string, error) {
	applied, err := s.appliedMigrations(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(applied))
	for name := range applied {
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

func (s *Store) appliedMigrations(ctx context.Context) (map[string]bool, error) {
	rows, err := s.conn.Query(ctx, "SELECT DISTINCT name FROM "+migrationsTable)
	if err != nil {
		return nil, wrapErr("read "+migrationsTable, err)
	}
	defer rows.Close()
	applied := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, wrapErr("read "+migrationsTable, err)
		}
		applied[name] = true
	}
	return applied, wrapErr("read "+migrationsTable, rows.Err())
}

func (s *Store) applyMigration(ctx context.Context, path, name string) error {
	body, err := migrations.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read migration %s: %w", name, err)
	}
	for i, stmt := range splitStatements(string(body)) {
		if err := s.conn.Exec(ctx, stmt); err != nil {
			return wrapErr(fmt.Sprintf("migration %s statement %d", name, i+1), err)
		}
	}
	err = s.conn.Exec(ctx, "INSERT INTO "+migrationsTable+" (name, applied_at) VALUES ({name:String}, {at:DateTime64(3, 'UTC')})",
		clickhouse.Named("name", name), clickhouse.Named("at", s.opts.Now().UTC()))
	return wrapErr("record migration "+name, err)
}

// ensureDatabase creates the DSN's database through a connection that
// names no database: the server refuses a request whose database is
// missing.
func (s *Store) ensureDatabase(ctx context.Context) error {
	db := s.chOpts.Auth.Database
	if db == "" {
		return nil
	}
	opts := *s.chOpts
	opts.Auth.Database = ""
	conn, err := clickhouse.Open(&opts)
	if err != nil {
		return fmt.Errorf("clickhouse open: %w", err)
	}
	defer conn.Close()
	return wrapErr("create database", conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(db)))
}

// quoteIdent quotes an identifier for ClickHouse.
func quoteIdent(name string) string {
	return "`" + strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(name) + "`"
}

// splitStatements cuts a migration file into statements at semicolons
// outside quotes and comments, dropping comments and empty statements:
// the server runs one statement per request.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if stmt := strings.TrimSpace(cur.String()); stmt != "" {
			out = append(out, stmt)
		}
		cur.Reset()
	}
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			cur.WriteByte('\n')
		case c == '\'' || c == '"' || c == '`':
			end := quotedEnd(sql, i)
			cur.WriteString(sql[i:end])
			i = end - 1
		case c == ';':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// quotedEnd returns the index just past the quoted run starting at i,
// honouring backslash escapes and doubled quotes.
func quotedEnd(sql string, i int) int {
	q := sql[i]
	for j := i + 1; j < len(sql); j++ {
		switch {
		case sql[j] == '\\':
			j++
		case sql[j] == q && j+1 < len(sql) && sql[j+1] == q:
			j++
		case sql[j] == q:
			return j + 1
		}
	}
	return len(sql)
}
