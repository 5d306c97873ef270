package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// This file holds the statement helpers of the content records (objects,
// labels, tables, files, feedback, prices).

// eachRow runs a query and hands every result row to scan; op names the
// operation in errors. Errors of scan (conversions) are not the server's,
// so they are not marked storage.ErrUnavailable.
func (s *Store) eachRow(ctx context.Context, op, q string, scan func(driver.Rows) error, args ...any) error {
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return wrapErr(op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("clickhouse %s: %w", op, err)
		}
	}
	return wrapErr(op, rows.Err())
}

// stringColumn runs a one-column query of strings.
func (s *Store) stringColumn(ctx context.Context, op, q string, args ...any) ([]string, error) {
	out := []string{}
	err := s.eachRow(ctx, op, q, func(rows driver.Rows) error {
		var v string
		err := rows.Scan(&v)
		out = append(out, v)
		return err
	}, args...)
	return out, err
}

// insertBatch writes n rows into table as one INSERT; row(i) gives the
// values of row i in the order of columns.
func (s *Store) insertBatch(ctx context.Context, table, columns string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	b, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+table+" ("+columns+")")
	if err != nil {
		return wrapErr("prepare "+table+" insert", err)
	}
	for i := range n {
		if err := b.Append(row(i)...); err != nil {
			_ = b.Abort()
			return fmt.Errorf("clickhouse %s insert: %w", table, err)
		}
	}
	return wrapErr("insert "+table, b.Send())
}

// chunks splits vals into runs of at most lookupChunk, the size one
// Array(String) parameter may carry in a request URL.
func chunks(vals []string) [][]string {
	var out [][]string
	for len(vals) > 0 {
		n := min(len(vals), lookupChunk)
		out = append(out, vals[:n])
		vals = vals[n:]
	}
	return out
}
