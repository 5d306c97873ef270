package duckdb

import (
	"context"
	"fmt"
	"math"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// QueryTable implements storage.TableStore.
func (s *Store) QueryTable(ctx context.Context, req storage.TableQueryReq) (storage.TableQueryRes, error) {
	return storekit.QueryTable(ctx, tablePages{s}, req)
}

// tablePages reads table rows for storekit.QueryTable.
type tablePages struct{ s *Store }

// NaturalPage reads the page's slice of the digest list.
func (p tablePages) NaturalPage(ctx context.Context, projectID, tableDigest string, offset, limit int64) ([]storekit.TableEntry, error) {
	end := int64(-1) // list_slice: -1 is the last element
	if limit >= 0 {
		end = offset + min(limit, math.MaxInt64-offset)
	}
	digests, _, err := loadDigestList(ctx, p.s.db, `SELECT list_slice(row_digests, ?, ?) FROM tables
		WHERE project_id = ? AND digest = ?`, offset+1, end, projectID, tableDigest)
	if err != nil || len(digests) == 0 {
		return nil, err
	}
	page := storekit.PageEntries(digests, offset)
	return page, p.s.fillRows(ctx, projectID, page)
}

// FilteredEntries reads the whole digest list and the rows it keeps.
func (p tablePages) FilteredEntries(ctx context.Context, req storage.TableQueryReq) ([]storekit.TableEntry, error) {
	digests, _, err := tableRowDigests(ctx, p.s.db, req.ProjectID, req.Digest)
	if err != nil {
		return nil, err
	}
	entries := storekit.SelectEntries(digests, req.Filter)
	return entries, p.s.fillRows(ctx, req.ProjectID, entries)
}

// fillRows sets Val of every entry whose row is stored.
func (s *Store) fillRows(ctx context.Context, projectID string, entries []storekit.TableEntry) error {
	if len(entries) == 0 {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT digest, val_dump FROM table_rows
		WHERE project_id = ? AND digest IN (SELECT unnest(?::VARCHAR[]))`, projectID, storekit.DistinctSorted(storekit.EntryDigests(entries)))
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
	storekit.FillEntries(entries, vals)
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
		FROM tables t WHERE t.project_id = ? AND t.digest IN (SELECT unnest(?::VARCHAR[]))`, req.ProjectID, storekit.DistinctSorted(req.Digests))
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
	return storekit.StatsInOrder(req.Digests, found), rows.Err()
}
