package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.TableStore = (*Store)(nil)

// CreateTable implements storage.TableStore. Rows are inserted before the
// table, so a table is never visible without its rows; rows stored already
// are inserted again and merges collapse them.
func (s *Store) CreateTable(ctx context.Context, req storage.TableCreateReq) (storage.TableCreateRes, error) {
	t, err := storekit.PrepareTable(req.Table)
	if err != nil {
		return storage.TableCreateRes{}, err
	}
	if err := s.insertTableRows(ctx, req.Table.ProjectID, t.Rows); err != nil {
		return storage.TableCreateRes{}, err
	}
	if err := s.insertTable(ctx, req.Table.ProjectID, t.Digest, t.RowDigests); err != nil {
		return storage.TableCreateRes{}, err
	}
	return storage.TableCreateRes{Digest: t.Digest, RowDigests: t.RowDigests}, nil
}

// insertTableRows stores rows (each distinct digest once) in one INSERT.
func (s *Store) insertTableRows(ctx context.Context, projectID string, rows []storekit.PreparedRow) error {
	unique := storekit.UniqueRows(rows)
	now := s.writeTime()
	return s.insertBatch(ctx, "table_rows", "project_id, digest, val_dump, size_bytes, created_at", len(unique),
		func(i int) []any {
			r := unique[i]
			return []any{projectID, r.Digest, r.Dump, int64(len(r.Dump)), now}
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
	u, err := storekit.PlanTableUpdate(req, base, found)
	if err != nil {
		return storage.TableUpdateRes{}, err
	}
	if err := s.insertTableRows(ctx, req.ProjectID, u.Rows); err != nil {
		return storage.TableUpdateRes{}, err
	}
	return u.Res, s.insertTable(ctx, req.ProjectID, u.Res.Digest, u.RowDigests)
}

// CreateTableFromDigests implements storage.TableStore.
func (s *Store) CreateTableFromDigests(ctx context.Context, req storage.TableCreateFromDigestsReq) (storage.TableCreateFromDigestsRes, error) {
	d, err := storekit.TableFromDigests(req)
	if err != nil {
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
