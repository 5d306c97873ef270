package clickhouse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

var _ storage.TableStore = (*Store)(nil)

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

// CreateTable implements storage.TableStore. Rows are inserted before the
// table, so a table is never visible without its rows; rows stored already
// are inserted again and merges collapse them.
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
	if err := s.insertTableRows(ctx, t.ProjectID, rows); err != nil {
		return storage.TableCreateRes{}, err
	}
	if err := s.insertTable(ctx, t.ProjectID, tableDigest, digests); err != nil {
		return storage.TableCreateRes{}, err
	}
	return storage.TableCreateRes{Digest: tableDigest, RowDigests: digests}, nil
}

// insertTableRows stores rows (each distinct digest once) in one INSERT.
func (s *Store) insertTableRows(ctx context.Context, projectID string, rows []preparedRow) error {
	seen := make(map[string]bool, len(rows))
	unique := rows[:0:0]
	for _, r := range rows {
		if !seen[r.digest] {
			seen[r.digest] = true
			unique = append(unique, r)
		}
	}
	now := s.writeTime()
	return s.insertBatch(ctx, "table_rows", "project_id, digest, val_dump, size_bytes, created_at", len(unique),
		func(i int) []any {
			r := unique[i]
			return []any{projectID, r.digest, r.dump, int64(len(r.dump)), now}
		})
}

func (s *Store) insertTable(ctx context.Context, projectID, tableDigest string, rowDigests []string) error {
	if rowDigests == nil {
		rowDigests = []string{}
	}
	return s.insertBatch(ctx, "tables", "project_id, digest, row_digests, created_at", 1,
		func(int) []any { return []any{projectID, tableDigest, rowDigests, s.writeTime()} })
}

// UpdateTable implements storage.TableStore.
func (s *Store) UpdateTable(ctx context.Context, req storage.TableUpdateReq) (storage.TableUpdateRes, error) {
	base, found, err := s.tableRowDigests(ctx, req.ProjectID, req.BaseDigest)
	if err != nil {
		return storage.TableUpdateRes{}, err
	}
	if !found {
		return storage.TableUpdateRes{}, fmt.Errorf("table %s not found; create it first or use a stored base_digest: %w",
			req.BaseDigest, storage.ErrNotFound)
	}
	final, updated, rows, err := applyUpdates(base, req.Updates)
	if err != nil {
		return storage.TableUpdateRes{}, err
	}
	if err := s.insertTableRows(ctx, req.ProjectID, rows); err != nil {
		return storage.TableUpdateRes{}, err
	}
	res := storage.TableUpdateRes{Digest: digest.TableDigest(final), UpdatedRowDigests: updated}
	return res, s.insertTable(ctx, req.ProjectID, res.Digest, final)
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
	return storage.TableCreateFromDigestsRes{Digest: d}, s.insertTable(ctx, req.ProjectID, d, req.RowDigests)
}

// tableRowDigests loads a table's row digest list; found is false when
// the project has no such table.
func (s *Store) tableRowDigests(ctx context.Context, projectID, tableDigest string) ([]string, bool, error) {
	return s.digestList(ctx, "row_digests", projectID, tableDigest)
}

// digestList reads list, an Array(String) expression over a tables row,
// from the project's table.
func (s *Store) digestList(ctx context.Context, list, projectID, tableDigest string, args ...any) ([]string, bool, error) {
	var out []string
	found := false
	err := s.eachRow(ctx, "read table", "SELECT "+list+" FROM tables WHERE project_id = {project:String} AND digest = {table:String} LIMIT 1",
		func(rows driver.Rows) error {
			found = true
			return rows.Scan(&out)
		}, append(args, clickhouse.Named("project", projectID), clickhouse.Named("table", tableDigest))...)
	return out, found, err
}
