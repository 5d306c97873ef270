package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// rowChunk bounds the rows bound to one INSERT: large enough that a 10k-row
// table is a handful of statements, small enough to cap the bound memory.
const rowChunk = 2000

// CreateTable implements storage.TableStore.
func (s *Store) CreateTable(ctx context.Context, req storage.TableCreateReq) (storage.TableCreateRes, error) {
	t, err := storekit.PrepareTable(req.Table)
	if err != nil {
		return storage.TableCreateRes{}, err
	}
	projectID := req.Table.ProjectID
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := insertRows(ctx, tx, projectID, t.Rows); err != nil {
			return err
		}
		return insertTable(ctx, tx, projectID, t.Digest, t.RowDigests)
	})
	if err != nil {
		return storage.TableCreateRes{}, err
	}
	return storage.TableCreateRes{Digest: t.Digest, RowDigests: t.RowDigests}, nil
}

// insertRows stores rows not stored yet, a chunk per statement.
func insertRows(ctx context.Context, tx *sql.Tx, projectID string, rows []storekit.PreparedRow) error {
	for chunk := range slices.Chunk(storekit.UniqueRows(rows), rowChunk) {
		digests, dumps, sizes := make([]string, len(chunk)), make([]string, len(chunk)), make([]int64, len(chunk))
		for i, r := range chunk {
			digests[i], dumps[i], sizes[i] = r.Digest, r.Dump, int64(len(r.Dump))
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO table_rows (project_id, digest, val_dump, size_bytes, created_at)
			SELECT ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::BIGINT[]), ? ON CONFLICT DO NOTHING`,
			projectID, digests, dumps, sizes, writeTime())
		if err != nil {
			return fmt.Errorf("insert table rows: %w", err)
		}
	}
	return nil
}

func insertTable(ctx context.Context, tx *sql.Tx, projectID, tableDigest string, rowDigests []string) error {
	if rowDigests == nil {
		rowDigests = []string{}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO tables (project_id, digest, row_digests, created_at)
		VALUES (?, ?, ?::VARCHAR[], ?) ON CONFLICT DO NOTHING`, projectID, tableDigest, rowDigests, writeTime())
	if err != nil {
		return fmt.Errorf("insert table %s: %w", tableDigest, err)
	}
	return nil
}

// UpdateTable implements storage.TableStore.
func (s *Store) UpdateTable(ctx context.Context, req storage.TableUpdateReq) (storage.TableUpdateRes, error) {
	var res storage.TableUpdateRes
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		base, found, err := tableRowDigests(ctx, tx, req.ProjectID, req.BaseDigest)
		if err != nil {
			return err
		}
		u, err := storekit.PlanTableUpdate(req, base, found)
		if err != nil {
			return err
		}
		if err := insertRows(ctx, tx, req.ProjectID, u.Rows); err != nil {
			return err
		}
		res = u.Res
		return insertTable(ctx, tx, req.ProjectID, res.Digest, u.RowDigests)
	})
	return res, err
}

// CreateTableFromDigests implements storage.TableStore.
func (s *Store) CreateTableFromDigests(ctx context.Context, req storage.TableCreateFromDigestsReq) (storage.TableCreateFromDigestsRes, error) {
	d, err := storekit.TableFromDigests(req)
	if err != nil {
		return storage.TableCreateFromDigestsRes{}, err
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error { return insertTable(ctx, tx, req.ProjectID, d, req.RowDigests) })
	return storage.TableCreateFromDigestsRes{Digest: d}, err
}

// tableRowDigests loads a table's row digest list.
func tableRowDigests(ctx context.Context, q sqlQuerier, projectID, tableDigest string) ([]string, bool, error) {
	return loadDigestList(ctx, q, `SELECT row_digests FROM tables WHERE project_id = ? AND digest = ?`, projectID, tableDigest)
}

// loadDigestList runs a query answering at most one VARCHAR[] value;
// found is false when it answers no row.
func loadDigestList(ctx context.Context, q sqlQuerier, query string, args ...any) (list []string, found bool, err error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, false, fmt.Errorf("load table: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, false, rows.Err()
	}
	var raw []any
	if err := rows.Scan(&raw); err != nil {
		return nil, false, fmt.Errorf("scan table digests: %w", err)
	}
	list = make([]string, len(raw))
	for i, v := range raw {
		s, ok := v.(string)
		if !ok {
			return nil, false, errors.New("BUG: row_digests holds a non-string")
		}
		list[i] = s
	}
	return list, true, rows.Err()
}
