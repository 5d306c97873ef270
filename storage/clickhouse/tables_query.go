package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// maxTableOffset bounds offsets sent to arraySlice; no table is longer.
const maxTableOffset = 1 << 40

// listedDigests selects the digests of list (an Array(String) expression
// over the table row) for an IN subquery.
func listedDigests(list string) string {
	return "SELECT arrayJoin(" + list + ") FROM tables WHERE project_id = {project:String} AND digest = {table:String}"
}

// QueryTable implements storage.TableStore.
func (s *Store) QueryTable(ctx context.Context, req storage.TableQueryReq) (storage.TableQueryRes, error) {
	return storekit.QueryTable(ctx, tablePages{s}, req)
}

// tablePages reads table rows for storekit.QueryTable. Digests are
// selected by subqueries over the table on the server, so no parameter
// carries a whole list.
type tablePages struct{ s *Store }

// NaturalPage slices the page out of the digest list on the server and
// reads its rows.
func (p tablePages) NaturalPage(ctx context.Context, projectID, tableDigest string, offset, limit int64) ([]storekit.TableEntry, error) {
	slice := "arraySlice(row_digests, {from:Int64})"
	args := []any{clickhouse.Named("from", min(offset, maxTableOffset)+1)}
	if limit >= 0 {
		slice = "arraySlice(row_digests, {from:Int64}, {len:Int64})"
		args = append(args, clickhouse.Named("len", min(limit, maxTableOffset)))
	}
	digests, _, err := p.s.digestList(ctx, slice, projectID, tableDigest, args...)
	if err != nil || len(digests) == 0 {
		return nil, err
	}
	page := storekit.PageEntries(digests, offset)
	args = append(args, clickhouse.Named("table", tableDigest))
	return page, p.s.fillRows(ctx, projectID, page, listedDigests(slice), "", args...)
}

// FilteredEntries reads the whole digest list and the rows it keeps. A
// filter short enough for one parameter also narrows the rows read.
func (p tablePages) FilteredEntries(ctx context.Context, req storage.TableQueryReq) ([]storekit.TableEntry, error) {
	digests, _, err := p.s.tableRowDigests(ctx, req.ProjectID, req.Digest)
	if err != nil {
		return nil, err
	}
	entries := storekit.SelectEntries(digests, req.Filter)
	narrow, args := "", []any{clickhouse.Named("table", req.Digest)}
	if req.Filter != nil && len(req.Filter.RowDigests) > 0 && len(req.Filter.RowDigests) <= lookupChunk {
		narrow, args = " AND digest IN {filter:Array(String)}", append(args, clickhouse.Named("filter", req.Filter.RowDigests))
	}
	return entries, p.s.fillRows(ctx, req.ProjectID, entries, listedDigests("row_digests"), narrow, args...)
}

// fillRows sets Val of every entry whose row is stored, reading the rows
// whose digests src (an IN subquery) selects, narrowed by narrow.
func (s *Store) fillRows(ctx context.Context, projectID string, entries []storekit.TableEntry, src, narrow string, args ...any) error {
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
	storekit.FillEntries(entries, vals)
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
	q := tableStatsSQL
	if req.IncludeStorageSize {
		q = tableSizesSQL
	}
	found := map[string]storage.TableStatsRow{}
	for _, chunk := range chunks(storekit.DistinctSorted(req.Digests)) {
		err := s.eachRow(ctx, "table stats", q, func(rows driver.Rows) error {
			var r storage.TableStatsRow
			err := rows.Scan(&r.Digest, &r.Count, &r.StorageSizeBytes)
			found[r.Digest] = r
			return err
		}, clickhouse.Named("project", req.ProjectID), clickhouse.Named("digests", chunk))
		if err != nil {
			return storage.TableQueryStatsBatchRes{Tables: []storage.TableStatsRow{}}, err
		}
	}
	return storekit.StatsInOrder(req.Digests, found), nil
}
