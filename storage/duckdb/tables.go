package duckdb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

// rowChunk bounds the rows bound to one INSERT: large enough that a 10k-row
// table is a handful of statements, small enough to cap the bound memory.
const rowChunk = 2000

// preparedRow is a row ready to store: its digest (sorted-keys text) and
// the text kept (received key order, Python separators).
type preparedRow struct {
	digest, dump string
}

func prepareRow(raw json.RawMessage) (preparedRow, error) {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return preparedRow{}, fmt.Errorf("a row must be a JSON object: %w", storage.ErrInvalidArgument)
	}
	sorted, err := digest.Dumps(raw, digest.Options{SortKeys: true})
	if err != nil {
		return preparedRow{}, fmt.Errorf("%w: %w", storage.ErrInvalidArgument, err)
	}
	kept, err := digest.Dumps(raw, digest.Options{})
	if err != nil {
		return preparedRow{}, fmt.Errorf("%w: %w", storage.ErrInvalidArgument, err)
	}
	p := preparedRow{digest: digest.BytesDigest(sorted.Text), dump: string(kept.Text)}
	if !kept.Finite {
		// Python's text holds Infinity, which no JSON reader accepts back.
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return preparedRow{}, fmt.Errorf("%w: %w", storage.ErrInvalidArgument, err)
		}
		p.dump = b.String()
	}
	return p, nil
}

// CreateTable implements storage.TableStore.
func (s *Store) CreateTable(ctx context.Context, req storage.TableCreateReq) (storage.TableCreateRes, error) {
	t := req.Table
	if t.ProjectID == "" {
		return storage.TableCreateRes{}, fmt.Errorf("table.project_id is required: %w", storage.ErrInvalidArgument)
	}
	rows := make([]preparedRow, len(t.Rows))
	digests := make([]string, len(t.Rows))
	for i, raw := range t.Rows {
		p, err := prepareRow(raw)
		if err != nil {
			return storage.TableCreateRes{}, fmt.Errorf("table.rows[%d]: %w", i, err)
		}
		rows[i], digests[i] = p, p.digest
	}
	tableDigest := digest.TableDigest(digests)
	if err := storage.CheckExpectedDigest("table", t.ExpectedDigest, tableDigest); err != nil {
		return storage.TableCreateRes{}, err
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := insertRows(ctx, tx, t.ProjectID, rows); err != nil {
			return err
		}
		return insertTable(ctx, tx, t.ProjectID, tableDigest, digests)
	})
	if err != nil {
		return storage.TableCreateRes{}, err
	}
	return storage.TableCreateRes{Digest: tableDigest, RowDigests: digests}, nil
}

// insertRows stores rows not stored yet, a chunk per statement.
func insertRows(ctx context.Context, tx *sql.Tx, projectID string, rows []preparedRow) error {
	seen := make(map[string]bool, len(rows))
	var digests, dumps []string
	var sizes []int64
	flush := func() error {
		if len(digests) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO table_rows (project_id, digest, val_dump, size_bytes, created_at)
			SELECT ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::BIGINT[]), ? ON CONFLICT DO NOTHING`,
			projectID, digests, dumps, sizes, writeTime())
		digests, dumps, sizes = digests[:0], dumps[:0], sizes[:0]
		if err != nil {
			return fmt.Errorf("insert table rows: %w", err)
		}
		return nil
	}
	for _, r := range rows {
		if seen[r.digest] {
			continue
		}
		seen[r.digest] = true
		digests, dumps, sizes = append(digests, r.digest), append(dumps, r.dump), append(sizes, int64(len(r.dump)))
		if len(digests) == rowChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
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
		if !found {
			return fmt.Errorf("table %s not found; create it first or use a stored base_digest: %w", req.BaseDigest, storage.ErrNotFound)
		}
		final, updated, rows, err := applyUpdates(base, req.Updates)
		if err != nil {
			return err
		}
		if err := insertRows(ctx, tx, req.ProjectID, rows); err != nil {
			return err
		}
		res = storage.TableUpdateRes{Digest: digest.TableDigest(final), UpdatedRowDigests: updated}
		return insertTable(ctx, tx, req.ProjectID, res.Digest, final)
	})
	return res, err
}

// applyUpdates applies append/pop/insert to a copy of base and returns the
// new list, the digest each update touched, and the rows to store.
func applyUpdates(base []string, updates []storage.TableUpdateSpec) (final, updated []string, rows []preparedRow, err error) {
	final, updated = append([]string{}, base...), []string{}
	for i, u := range updates {
		var touched string
		var row *preparedRow
		if final, touched, row, err = applyUpdate(final, u); err != nil {
			return nil, nil, nil, fmt.Errorf("updates[%d]: %w", i, err)
		}
		updated = append(updated, touched)
		if row != nil {
			rows = append(rows, *row)
		}
	}
	return final, updated, rows, nil
}

func applyUpdate(list []string, u storage.TableUpdateSpec) ([]string, string, *preparedRow, error) {
	set := 0
	for _, present := range []bool{u.Append != nil, u.Pop != nil, u.Insert != nil} {
		if present {
			set++
		}
	}
	if set != 1 {
		return nil, "", nil, fmt.Errorf("set exactly one of append, pop or insert: %w", storage.ErrInvalidArgument)
	}
	n := int64(len(list))
	if u.Pop != nil {
		if u.Pop.Index < 0 || u.Pop.Index >= n {
			return nil, "", nil, fmt.Errorf("pop: Index out of range: %d not in [0, %d): %w", u.Pop.Index, n, storage.ErrInvalidArgument)
		}
		popped := list[u.Pop.Index]
		return slices.Delete(list, int(u.Pop.Index), int(u.Pop.Index)+1), popped, nil, nil
	}
	row, at := json.RawMessage(nil), n
	if u.Append != nil {
		row = u.Append.Row
	} else {
		row, at = u.Insert.Row, u.Insert.Index
		if at < 0 || at > n {
			return nil, "", nil, fmt.Errorf("insert: Index out of range: %d not in [0, %d]: %w", at, n, storage.ErrInvalidArgument)
		}
	}
	p, err := prepareRow(row)
	if err != nil {
		return nil, "", nil, err
	}
	return slices.Insert(list, int(at), p.digest), p.digest, &p, nil
}

// CreateTableFromDigests implements storage.TableStore. Rows are not
// checked, as in the reference; queries skip digests never stored.
func (s *Store) CreateTableFromDigests(ctx context.Context, req storage.TableCreateFromDigestsReq) (storage.TableCreateFromDigestsRes, error) {
	d := digest.TableDigest(req.RowDigests)
	if err := storage.CheckExpectedDigest("table", req.ExpectedDigest, d); err != nil {
		return storage.TableCreateFromDigestsRes{}, err
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error { return insertTable(ctx, tx, req.ProjectID, d, req.RowDigests) })
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
