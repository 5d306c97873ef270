package clickhouse

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// schema is the row as the objects API returns it, size included.
func (r *objRow) schema() storage.ObjSchema {
	o := storage.ObjSchema{ProjectID: r.project, ObjectID: r.objectID, CreatedAt: r.created, DeletedAt: r.deleted,
		Digest: r.digest, VersionIndex: r.index, Kind: r.kind, BaseObjectClass: r.base, LeafObjectClass: r.leaf,
		Val: json.RawMessage(r.val), WBUserID: r.user}
	if r.latest {
		o.IsLatest = 1
	}
	size := r.size
	o.SizeBytes = &size
	return o
}

func objValue(metadataOnly bool) string {
	if metadataOnly {
		return "'{}'"
	}
	return "val_dump"
}

// ReadObject implements storage.ObjectStore.
func (s *Store) ReadObject(ctx context.Context, req storage.ObjReadReq) (storage.ObjReadRes, error) {
	return storekit.ReadObject(ctx, objectReader{s}, req)
}

// QueryObjects implements storage.ObjectStore.
func (s *Store) QueryObjects(ctx context.Context, req storage.ObjQueryReq) (storage.ObjQueryRes, error) {
	return storekit.QueryObjects(ctx, objectReader{s}, req)
}

// objectReader is the store as storekit's object reads see it.
type objectReader struct{ s *Store }

func (r objectReader) VersionNamed(ctx context.Context, projectID, objectID, selector string, metadataOnly bool) (storage.ObjSchema, bool, error) {
	cond, args, err := r.s.versionMatch(ctx, projectID, objectID, selector)
	if err != nil {
		return storage.ObjSchema{}, false, err
	}
	args = append(args, clickhouse.Named("project", projectID), clickhouse.Named("object", objectID))
	rows, err := r.s.selectObjRows(ctx, objValue(metadataOnly), "WHERE project_id = {project:String} AND object_id = {object:String} AND "+
		cond+" ORDER BY created_at, version_index LIMIT 1", args...)
	if err != nil || len(rows) == 0 {
		return storage.ObjSchema{}, false, err
	}
	return rows[0].schema(), true, nil
}

func (r objectReader) LiveVersions(ctx context.Context, req storage.ObjQueryReq, limit, offset int64) ([]storage.ObjSchema, error) {
	where, args := objFilter(req.ProjectID, req.Filter)
	q := "WHERE " + where + storekit.ObjectOrderBy(req.SortBy)
	if limit >= 0 {
		q += " LIMIT {limit:Int64}"
		args = append(args, clickhouse.Named("limit", limit))
	}
	q += " OFFSET {offset:Int64}"
	rows, err := r.s.selectObjRows(ctx, objValue(req.MetadataOnly), q, append(args, clickhouse.Named("offset", offset))...)
	if err != nil {
		return nil, err
	}
	objs := make([]storage.ObjSchema, len(rows))
	for i := range rows {
		objs[i] = rows[i].schema()
	}
	return objs, nil
}

func (r objectReader) AttachLabels(ctx context.Context, projectID string, objs []storage.ObjSchema) error {
	return r.s.attachLabels(ctx, projectID, objs)
}

// versionMatch is the condition for the version a selector names: latest,
// v<N>, a content digest, or an alias name (a name that is no alias is
// tried as a digest).
func (s *Store) versionMatch(ctx context.Context, projectID, objectID, selector string) (string, []any, error) {
	if selector == "latest" {
		return "is_latest", nil, nil
	}
	if n, ok := storage.VersionIndex(selector); ok {
		return "version_index = {index:Int64}", []any{clickhouse.Named("index", n)}, nil
	}
	d := selector
	if !storage.IsContentDigest(selector) {
		aliased, err := s.stringColumn(ctx, "resolve alias", `SELECT digest FROM object_aliases FINAL
			WHERE project_id = {project:String} AND object_id = {object:String} AND alias = {alias:String} AND NOT deleted`,
			clickhouse.Named("project", projectID), clickhouse.Named("object", objectID), clickhouse.Named("alias", selector))
		if err != nil {
			return "", nil, err
		}
		if len(aliased) > 0 {
			d = aliased[0]
		}
	}
	return "digest = {digest:String}", []any{clickhouse.Named("digest", d)}, nil
}

// labelled selects the versions of the project carrying one of the names
// of a label table's column.
func labelled(table, column, param string) string {
	return "(object_id, digest) IN (SELECT object_id, digest FROM " + table + " FINAL WHERE project_id = {project:String} AND NOT deleted AND " +
		column + " IN {" + param + ":Array(String)})"
}

func objFilter(projectID string, f *storage.ObjectVersionFilter) (string, []any) {
	conds, args := []string{"project_id = {project:String}", "deleted_at IS NULL"}, []any{clickhouse.Named("project", projectID)}
	add := func(cond, name string, v any) {
		conds, args = append(conds, cond), append(args, clickhouse.Named(name, v))
	}
	if f == nil {
		return strings.Join(conds, " AND "), args
	}
	if f.IsOp != nil {
		add("(kind = 'op') = {is_op:Bool}", "is_op", *f.IsOp)
	}
	if f.LatestOnly {
		conds = append(conds, "is_latest")
	}
	for _, in := range []struct {
		cond, name string
		vals       []string
	}{
		{"object_id IN {object_ids:Array(String)}", "object_ids", f.ObjectIDs},
		{"base_object_class IN {bases:Array(String)}", "bases", f.BaseObjectClasses},
		{"(base_object_class IS NULL OR base_object_class NOT IN {excluded:Array(String)})", "excluded", f.ExcludeBaseObjectClasses},
		{"leaf_object_class IN {leaves:Array(String)}", "leaves", f.LeafObjectClasses},
		{labelled("object_tags", "tag", "tags"), "tags", f.Tags},
	} {
		if len(in.vals) > 0 {
			add(in.cond, in.name, in.vals)
		}
	}
	if len(f.Aliases) > 0 {
		// "latest" is no stored alias: it matches the latest version.
		add("({has_latest:Bool} AND is_latest OR "+labelled("object_aliases", "alias", "aliases")+")",
			"has_latest", slices.Contains(f.Aliases, "latest"))
		args = append(args, clickhouse.Named("aliases", f.Aliases))
	}
	return strings.Join(conds, " AND "), args
}
