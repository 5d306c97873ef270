package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// maxInsertParams bounds the parameters of one multi-row INSERT.
const maxInsertParams = 2000

// insertValues inserts rows (each of the same arity) with head, an
// "INSERT ... (columns)" clause, and tail after the VALUES (an ON CONFLICT
// clause, or ""), as few multi-row VALUES statements. DuckDB
// gives every INSERT statement of a transaction local storage of its own:
// a thousand one-row INSERTs of feedback in one transaction pinned 384 MiB
// and failed out of memory, where statements of hundreds of rows take a
// few.
func insertValues(ctx context.Context, tx *sql.Tx, head, tail string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	arity := len(rows[0])
	per := max(1, maxInsertParams/arity)
	tuple := "(" + qmarks(arity) + ")"
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(len(rows), start+per)]
		var sql strings.Builder
		sql.WriteString(head)
		sql.WriteString(" VALUES ")
		args := make([]any, 0, len(chunk)*arity)
		for i, r := range chunk {
			if len(r) != arity {
				return fmt.Errorf("insert: row %d has %d values, want %d", start+i, len(r), arity)
			}
			if i > 0 {
				sql.WriteString(", ")
			}
			sql.WriteString(tuple)
			args = append(args, r...)
		}
		sql.WriteString(tail)
		if _, err := tx.ExecContext(ctx, sql.String(), args...); err != nil {
			return err
		}
	}
	return nil
}
