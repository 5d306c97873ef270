package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
)

// tableEntry is one position of a table: its original index and digest,
// and the row text once fetched.
type tableEntry struct {
	index  int64
	digest string
	val    string
}

// maxTableOffset bounds offsets sent to arraySlice; no table is longer.
const maxTableOffset = 1 << 40

// listedDigests selects the digests of list (an Array(String) expression
// over the table row) for an IN subquery.
func listedDigests(list string) string {
	return "SELECT arrayJoin(" + list + ") FROM tables WHERE project_id = {project:String} AND digest = {table:String}"
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

// naturalPage slices the page out of the digest list on the server and
// reads its rows. Digests listed but never stored do not count toward the
// page, so when the page has a hole the whole list is read once and the
// page cut again.
func (s *Store) naturalPage(ctx context.Context, projectID, tableDigest string, offset, limit int64) ([]tableEntry, error) {
	slice := "arraySlice(row_digests, {from:Int64})"
	args := []any{clickhouse.Named("from", min(offset, maxTableOffset)+1)}
	if limit >= 0 {
		slice = "arraySlice(row_digests, {from:Int64}, {len:Int64})"
		args = append(args, clickhouse.Named("len", min(limit, maxTableOffset)))
	}
	digests, _, err := s.digestList(ctx, slice, projectID, tableDigest, args...)
	if err != nil || len(digests) == 0 {
		return nil, err
	}
	page := make([]tableEntry, len(digests))
	for i, d := range digests {
		page[i] = tableEntry{index: offset + int64(i), digest: d}
	}
	args = append(args, clickhouse.Named("table", tableDigest))
	if err := s.fillRows(ctx, projectID, page, listedDigests(slice), "", args...); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(page, func(e tableEntry) bool { return e.val == "" }) {
		return page, nil
	}
	return s.selectedPage(ctx, storage.TableQueryReq{ProjectID: projectID, Digest: tableDigest}, nil, offset, limit)
}

// selectedPage reads every listed row that passes the filter, sorts and
// cuts the page. A filter short enough for one parameter also narrows the
// rows read.
func (s *Store) selectedPage(ctx context.Context, req storage.TableQueryReq, keys []rowSortKey, offset, limit int64) ([]tableEntry, error) {
	digests, _, err := s.tableRowDigests(ctx, req.ProjectID, req.Digest)
	if err != nil {
		return nil, err
	}
	entries := selectEntries(digests, req.Filter)
	narrow, args := "", []any{clickhouse.Named("table", req.Digest)}
	if req.Filter != nil && len(req.Filter.RowDigests) > 0 && len(req.Filter.RowDigests) <= lookupChunk {
		narrow, args = " AND digest IN {filter:Array(String)}", append(args, clickhouse.Named("filter", req.Filter.RowDigests))
	}
	if err := s.fillRows(ctx, req.ProjectID, entries, listedDigests("row_digests"), narrow, args...); err != nil {
		return nil, err
	}
	entries = slices.DeleteFunc(entries, func(e tableEntry) bool { return e.val == "" }) // never stored
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

// fillRows sets val of every entry whose row is stored, reading the rows
// whose digests src (an IN subquery) selects, narrowed by narrow.
func (s *Store) fillRows(ctx context.Context, projectID string, entries []tableEntry, src, narrow string, args ...any) error {
	if len(entries) == 0 {
		return nil
	}
	vals := make(map[string]string, len(entries))
	err := s.eachRow(ctx, "read table rows", "SELECT digest, val_dump FROM table_rows WHERE project_id = {project:String} AND digest IN ("+
		src+")"+narrow+" LIMIT 1 BY digest", func(rows driver.Rows) error {
		var d, v string
		err := rows.Scan(&d, &v)
		vals[d] = v
		return err
	}, append(args, clickhouse.Named("project", projectID))...)
	for i := range entries {
		entries[i].val = vals[entries[i].digest]
	}
	return err
}

// QueryTableStats implements storage.TableStore.
func (s *Store) QueryTableStats(ctx context.Context, req storage.TableQueryStatsReq) (storage.TableQueryStatsRes, error) {
	var res storage.TableQueryStatsRes
	err := s.eachRow(ctx, "table stats", `SELECT toInt64(length(row_digests)) FROM tables
		WHERE project_id = {project:String} AND digest = {table:String} LIMIT 1`,
		func(rows driver.Rows) error { return rows.Scan(&res.Count) },
		clickhouse.Named("project", req.ProjectID), clickhouse.Named("table", req.Digest))
	return res, err
}

// tableStatsSQL counts each listed table's rows and, with sizes, sums the
// stored sizes of its rows, a row listed twice counting twice, as in the
// reference. LEFT ARRAY JOIN keeps empty tables.
const (
	tableStatsSQL = `SELECT digest, toInt64(length(row_digests)), CAST(NULL AS Nullable(Int64)) FROM tables
		WHERE project_id = {project:String} AND digest IN {digests:Array(String)} LIMIT 1 BY digest`
	tableSizesSQL = `SELECT t.digest, toInt64(any(length(t.row_digests))), toNullable(toInt64(sum(r.size_bytes)))
		FROM (SELECT digest, row_digests FROM tables WHERE project_id = {project:String} AND digest IN {digests:Array(String)}
			LIMIT 1 BY digest) AS t
		LEFT ARRAY JOIN t.row_digests AS rd
		LEFT JOIN (SELECT digest, any(size_bytes) AS size_bytes FROM table_rows WHERE project_id = {project:String}
			AND digest IN (SELECT arrayJoin(row_digests) FROM tables WHERE project_id = {project:String} AND digest IN {digests:Array(String)})
			GROUP BY digest) AS r ON r.digest = rd
		GROUP BY t.digest`
)

// QueryTableStatsBatch implements storage.TableStore.
func (s *Store) QueryTableStatsBatch(ctx context.Context, req storage.TableQueryStatsBatchReq) (storage.TableQueryStatsBatchRes, error) {
	res := storage.TableQueryStatsBatchRes{Tables: []storage.TableStatsRow{}}
	q := tableStatsSQL
	if req.IncludeStorageSize {
		q = tableSizesSQL
	}
	found := map[string]storage.TableStatsRow{}
	for _, chunk := range chunks(distinctSorted(req.Digests)) {
		err := s.eachRow(ctx, "table stats", q, func(rows driver.Rows) error {
			var r storage.TableStatsRow
			err := rows.Scan(&r.Digest, &r.Count, &r.StorageSizeBytes)
			found[r.Digest] = r
			return err
		}, clickhouse.Named("project", req.ProjectID), clickhouse.Named("digests", chunk))
		if err != nil {
			return res, err
		}
	}
	for _, d := range req.Digests {
		if r, ok := found[d]; ok {
			res.Tables = append(res.Tables, r)
		}
	}
	return res, nil
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
