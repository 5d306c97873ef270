package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
)

// tableEntry is one position of a table: its original index and digest,
// and the row text once fetched.
type tableEntry struct {
	index  int64
	digest string
	val    string
}

// QueryTable implements storage.TableStore. In table order only the
// page's digests and rows are read; a filter or sort reads the whole list.
func (s *Store) QueryTable(ctx context.Context, req storage.TableQueryReq) (storage.TableQueryRes, error) {
	limit, offset, err := storage.PageBounds(req.Limit, req.Offset)
	if err != nil {
		return storage.TableQueryRes{}, err
	}
	keys, err := tableSortKeys(req.SortBy)
	if err != nil {
		return storage.TableQueryRes{}, err
	}
	var rows []tableEntry
	if len(keys) == 0 && (req.Filter == nil || len(req.Filter.RowDigests) == 0) {
		rows, err = s.naturalPage(ctx, req.ProjectID, req.Digest, offset, limit)
	} else {
		rows, err = s.selectedPage(ctx, req, keys, offset, limit)
	}
	if err != nil {
		return storage.TableQueryRes{}, err
	}
	res := storage.TableQueryRes{Rows: make([]storage.TableRowSchema, len(rows))}
	for i, e := range rows {
		res.Rows[i] = storage.TableRowSchema{Digest: e.digest, Val: json.RawMessage(e.val), OriginalIndex: e.index}
	}
	return res, nil
}

// naturalPage reads the page's slice of the digest list. Digests listed but
// never stored do not count toward the page, so when the page has a hole
// the whole list is read once and the page cut again.
func (s *Store) naturalPage(ctx context.Context, projectID, tableDigest string, offset, limit int64) ([]tableEntry, error) {
	end := int64(-1) // list_slice: -1 is the last element
	if limit >= 0 {
		end = offset + min(limit, math.MaxInt64-offset)
	}
	digests, _, err := loadDigestList(ctx, s.db, `SELECT list_slice(row_digests, ?, ?) FROM tables
		WHERE project_id = ? AND digest = ?`, offset+1, end, projectID, tableDigest)
	if err != nil || len(digests) == 0 {
		return nil, err
	}
	page := make([]tableEntry, len(digests))
	for i, d := range digests {
		page[i] = tableEntry{index: offset + int64(i), digest: d}
	}
	if err := s.fillRows(ctx, projectID, page); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(page, func(e tableEntry) bool { return e.val == "" }) {
		return page, nil
	}
	return s.selectedPage(ctx, storage.TableQueryReq{ProjectID: projectID, Digest: tableDigest}, nil, offset, limit)
}

// selectedPage reads every listed row that passes the filter, sorts and
// cuts the page.
func (s *Store) selectedPage(ctx context.Context, req storage.TableQueryReq, keys []rowSortKey, offset, limit int64) ([]tableEntry, error) {
	digests, _, err := tableRowDigests(ctx, s.db, req.ProjectID, req.Digest)
	if err != nil {
		return nil, err
	}
	entries := selectEntries(digests, req.Filter)
	if err := s.fillRows(ctx, req.ProjectID, entries); err != nil {
		return nil, err
	}
	entries = storedEntries(entries)
	sortEntries(entries, keys)
	return pageOf(entries, offset, limit), nil
}

func selectEntries(digests []string, f *storage.TableRowFilter) []tableEntry {
	var keep map[string]bool
	if f != nil && len(f.RowDigests) > 0 {
		keep = make(map[string]bool, len(f.RowDigests))
		for _, d := range f.RowDigests {
			keep[d] = true
		}
	}
	entries := make([]tableEntry, 0, len(digests))
	for i, d := range digests {
		if keep == nil || keep[d] {
			entries = append(entries, tableEntry{index: int64(i), digest: d})
		}
	}
	return entries
}

func pageOf[T any](all []T, offset, limit int64) []T {
	if offset >= int64(len(all)) {
		return nil
	}
	all = all[offset:]
	if limit >= 0 && limit < int64(len(all)) {
		all = all[:limit]
	}
	return all
}

// storedEntries drops entries whose row was never stored.
func storedEntries(entries []tableEntry) []tableEntry {
	return slices.DeleteFunc(entries, func(e tableEntry) bool { return e.val == "" })
}

// fillRows sets val of every entry whose row is stored.
func (s *Store) fillRows(ctx context.Context, projectID string, entries []tableEntry) error {
	if len(entries) == 0 {
		return nil
	}
	want := make([]string, len(entries))
	for i, e := range entries {
		want[i] = e.digest
	}
	rows, err := s.db.QueryContext(ctx, `SELECT digest, val_dump FROM table_rows
		WHERE project_id = ? AND digest IN (SELECT unnest(?::VARCHAR[]))`, projectID, distinctSorted(want))
	if err != nil {
		return fmt.Errorf("read table rows: %w", err)
	}
	defer rows.Close()
	vals := make(map[string]string, len(entries))
	for rows.Next() {
		var d, v string
		if err := rows.Scan(&d, &v); err != nil {
			return fmt.Errorf("scan table row: %w", err)
		}
		vals[d] = v
	}
	for i := range entries {
		entries[i].val = vals[entries[i].digest]
	}
	return rows.Err()
}

// QueryTableStats implements storage.TableStore.
func (s *Store) QueryTableStats(ctx context.Context, req storage.TableQueryStatsReq) (storage.TableQueryStatsRes, error) {
	digests, _, err := tableRowDigests(ctx, s.db, req.ProjectID, req.Digest)
	return storage.TableQueryStatsRes{Count: int64(len(digests))}, err
}

// QueryTableStatsBatch implements storage.TableStore. A row listed twice
// counts twice toward the storage size, as in the reference.
func (s *Store) QueryTableStatsBatch(ctx context.Context, req storage.TableQueryStatsBatchReq) (storage.TableQueryStatsBatchRes, error) {
	if len(req.Digests) == 0 {
		return storage.TableQueryStatsBatchRes{Tables: []storage.TableStatsRow{}}, nil
	}
	size := "NULL"
	if req.IncludeStorageSize {
		size = `(SELECT coalesce(sum(r.size_bytes), 0) FROM (SELECT unnest(t.row_digests) AS d) u
			JOIN table_rows r ON r.project_id = t.project_id AND r.digest = u.d)`
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.digest, len(t.row_digests), `+size+`
		FROM tables t WHERE t.project_id = ? AND t.digest IN (SELECT unnest(?::VARCHAR[]))`, req.ProjectID, distinctSorted(req.Digests))
	if err != nil {
		return storage.TableQueryStatsBatchRes{}, fmt.Errorf("table stats: %w", err)
	}
	defer rows.Close()
	found := map[string]storage.TableStatsRow{}
	for rows.Next() {
		var r storage.TableStatsRow
		if err := rows.Scan(&r.Digest, &r.Count, &r.StorageSizeBytes); err != nil {
			return storage.TableQueryStatsBatchRes{}, fmt.Errorf("scan table stats: %w", err)
		}
		found[r.Digest] = r
	}
	res := storage.TableQueryStatsBatchRes{Tables: []storage.TableStatsRow{}}
	for _, d := range req.Digests {
		if r, ok := found[d]; ok {
			res.Tables = append(res.Tables, r)
		}
	}
	return res, rows.Err()
}

// rowSortKey is one parsed sort_by term of a table query.
type rowSortKey struct {
	path []string
	desc bool
}

func tableSortKeys(sortBy []storage.SortBy) ([]rowSortKey, error) {
	keys := make([]rowSortKey, 0, len(sortBy))
	for _, sb := range sortBy {
		path, err := storage.TableSortPath(sb.Field)
		if err != nil {
			return nil, err
		}
		dir := strings.ToLower(sb.Direction)
		if dir != "asc" && dir != "desc" {
			return nil, fmt.Errorf("sort_by direction %q for %q: use asc or desc: %w", sb.Direction, sb.Field, storage.ErrInvalidArgument)
		}
		keys = append(keys, rowSortKey{path: path, desc: dir == "desc"})
	}
	return keys, nil
}
