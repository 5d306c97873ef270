package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.ObjectStore = (*Store)(nil)

// objRow is one version of an object_versions row.
type objRow struct {
	project, objectID, digest string
	version                   uint64
	kind                      string
	base, leaf                *string
	val                       string
	size                      int64
	index                     int64
	latest                    bool
	created                   time.Time
	deleted                   *time.Time
	user                      *string
}

// objColumns are the columns of an object_versions row, in the order
// scanObjRow reads and values writes them; %s is the value column.
const objColumns = `project_id, object_id, digest, version, kind, base_object_class, leaf_object_class, %s,
	size_bytes, version_index, is_latest, created_at, deleted_at, wb_user_id`

func (r *objRow) values() []any {
	return []any{r.project, r.objectID, r.digest, r.version, r.kind, r.base, r.leaf, r.val,
		r.size, r.index, r.latest, r.created, r.deleted, r.user}
}

// Meta implements storekit.Versioned.
func (r objRow) Meta() storekit.VersionMeta {
	return storekit.VersionMeta{Digest: r.digest, Kind: r.kind, Base: r.base, Leaf: r.leaf, Index: r.index,
		Created: r.created, Latest: r.latest, Deleted: r.deleted != nil}
}

func scanObjRow(rows driver.Rows) (objRow, error) {
	var r objRow
	err := rows.Scan(&r.project, &r.objectID, &r.digest, &r.version, &r.kind, &r.base, &r.leaf, &r.val,
		&r.size, &r.index, &r.latest, &r.created, &r.deleted, &r.user)
	r.created, r.deleted = r.created.UTC(), utcPtr(r.deleted)
	return r, err
}

// selectObjRows reads the current versions matching where (a clause over
// object_versions with named parameters); val is the value column to
// read, e.g. val_dump, or a constant when the value is not needed.
func (s *Store) selectObjRows(ctx context.Context, val, where string, args ...any) ([]objRow, error) {
	q := "SELECT " + fmt.Sprintf(objColumns, val) + " FROM object_versions FINAL " + where
	var out []objRow
	err := s.eachRow(ctx, "read objects", q, func(rows driver.Rows) error {
		r, err := scanObjRow(rows)
		out = append(out, r)
		return err
	}, args...)
	return out, err
}

// objectVersions loads every version of an object, deleted ones included,
// without values.
func (s *Store) objectVersions(ctx context.Context, projectID, objectID string) ([]objRow, error) {
	return s.selectObjRows(ctx, "''", "WHERE project_id = {project:String} AND object_id = {object:String}",
		clickhouse.Named("project", projectID), clickhouse.Named("object", objectID))
}

// insertObjRows writes rows as one INSERT, so a write that moves latest
// is seen whole or not at all.
func (s *Store) insertObjRows(ctx context.Context, rows []objRow) error {
	return s.insertBatch(ctx, "object_versions", fmt.Sprintf(objColumns, "val_dump"), len(rows),
		func(i int) []any { return rows[i].values() })
}

// CreateObject implements storage.ObjectStore.
func (s *Store) CreateObject(ctx context.Context, req storage.ObjCreateReq) (storage.ObjCreateRes, error) {
	o := req.Obj
	p, err := storekit.PrepareObject(o)
	if err != nil {
		return storage.ObjCreateRes{}, err
	}
	unlock := s.projects.lock([]string{o.ProjectID})
	defer unlock()
	if err := s.writeObjectVersion(ctx, o, p); err != nil {
		return storage.ObjCreateRes{}, err
	}
	return storage.ObjCreateRes{Digest: p.Digest, ObjectID: o.ObjectID}, nil
}

// writeObjectVersion writes what storekit.PlanCreate decides, a revived
// digest as a higher version of its row. The caller holds the project's
// lock.
func (s *Store) writeObjectVersion(ctx context.Context, o storage.ObjSchemaForInsert, p storekit.PreparedObject) error {
	versions, err := s.objectVersions(ctx, o.ProjectID, o.ObjectID)
	if err != nil {
		return err
	}
	plan, err := storekit.PlanCreate(o.ObjectID, versions, p)
	if err != nil {
		return err
	}
	if plan.Live {
		if versions[plan.Existing].latest {
			return nil
		}
		return s.moveLatest(ctx, versions, p.Digest, nil)
	}
	var stored uint64
	if plan.Existing >= 0 {
		stored = versions[plan.Existing].version
	}
	row := objRow{project: o.ProjectID, objectID: o.ObjectID, digest: p.Digest, version: s.versions.next(stored),
		kind: p.Kind, base: p.BaseObjectClass, leaf: p.LeafObjectClass, val: p.Dump, size: int64(len(p.Dump)),
		index: plan.Index, latest: true, created: s.writeTime(), user: o.WBUserID}
	return s.moveLatest(ctx, versions, p.Digest, &row)
}

// moveLatest makes target the latest version of the object whose versions
// are given, in one INSERT: fresh (the new or revived row of target, or
// nil when target is stored and live) and every stored row whose flag
// changes, read whole and written again with a higher version.
func (s *Store) moveLatest(ctx context.Context, versions []objRow, target string, fresh *objRow) error {
	flip := map[string]bool{}
	for _, v := range versions {
		if v.deleted == nil && v.latest != (v.digest == target) && (fresh == nil || v.digest != target) {
			flip[v.digest] = !v.latest
		}
	}
	var out []objRow
	if fresh != nil {
		out = append(out, *fresh)
	}
	if len(flip) > 0 {
		rows, err := s.rewriteObjRows(ctx, versions[0].project, versions[0].objectID, flip)
		if err != nil {
			return err
		}
		out = append(out, rows...)
	}
	return s.insertObjRows(ctx, out)
}

// rewriteObjRows reads the current rows of the digests in latest whole and
// returns them with is_latest set as given and a higher version.
func (s *Store) rewriteObjRows(ctx context.Context, projectID, objectID string, latest map[string]bool) ([]objRow, error) {
	digests := make([]string, 0, len(latest))
	for d := range latest {
		digests = append(digests, d)
	}
	rows, err := s.selectObjRows(ctx, "val_dump",
		"WHERE project_id = {project:String} AND object_id = {object:String} AND digest IN {digests:Array(String)}",
		clickhouse.Named("project", projectID), clickhouse.Named("object", objectID), clickhouse.Named("digests", digests))
	if err != nil {
		return nil, err
	}
	if len(rows) != len(digests) {
		return nil, fmt.Errorf("clickhouse rewrite versions of %s: %d of %d rows found", objectID, len(rows), len(digests))
	}
	for i := range rows {
		rows[i].latest = latest[rows[i].digest]
		rows[i].version = s.versions.next(rows[i].version)
	}
	return rows, nil
}

// writeTime is the created_at of a write, at the microsecond
// precision the tables keep, so values read back compare equal.
func (s *Store) writeTime() time.Time {
	return s.opts.Now().UTC().Truncate(time.Microsecond)
}
