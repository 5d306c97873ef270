package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// schema is the row as the objects API returns it.
func (r *objRow) schema(withSize bool) storage.ObjSchema {
	o := storage.ObjSchema{ProjectID: r.project, ObjectID: r.objectID, CreatedAt: r.created, DeletedAt: r.deleted,
		Digest: r.digest, VersionIndex: r.index, Kind: r.kind, BaseObjectClass: r.base, LeafObjectClass: r.leaf,
		Val: json.RawMessage(r.val), WBUserID: r.user}
	if r.latest {
		o.IsLatest = 1
	}
	if withSize {
		size := r.size
		o.SizeBytes = &size
	}
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
	cond, args, err := s.versionMatch(ctx, req.ProjectID, req.ObjectID, req.Digest)
	if err != nil {
		return storage.ObjReadRes{}, err
	}
	args = append(args, clickhouse.Named("project", req.ProjectID), clickhouse.Named("object", req.ObjectID))
	rows, err := s.selectObjRows(ctx, objValue(req.MetadataOnly), "WHERE project_id = {project:String} AND object_id = {object:String} AND "+
		cond+" ORDER BY created_at, version_index LIMIT 1", args...)
	if err != nil {
		return storage.ObjReadRes{}, err
	}
	if len(rows) == 0 {
		return storage.ObjReadRes{}, fmt.Errorf("Obj %s:%s not found: %w", req.ObjectID, req.Digest, storage.ErrNotFound)
	}
	if r := rows[0]; r.deleted != nil {
		return storage.ObjReadRes{}, &storage.ObjectDeletedError{ObjectID: r.objectID, VersionIndex: r.index, DeletedAt: *r.deleted}
	}
	objs := []storage.ObjSchema{rows[0].schema(false)}
	if req.IncludeTagsAndAliases {
		if err := s.attachLabels(ctx, req.ProjectID, objs); err != nil {
			return storage.ObjReadRes{}, err
		}
	}
	return storage.ObjReadRes{Obj: objs[0]}, nil
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

// QueryObjects implements storage.ObjectStore.
func (s *Store) QueryObjects(ctx context.Context, req storage.ObjQueryReq) (storage.ObjQueryRes, error) {
	limit, offset, err := storage.PageBounds(req.Limit, req.Offset)
	if err != nil {
		return storage.ObjQueryRes{}, err
	}
	where, args := objFilter(req.ProjectID, req.Filter)
	q := "WHERE " + where + storekit.ObjectOrderBy(req.SortBy)
	if limit >= 0 {
		q += " LIMIT {limit:Int64}"
		args = append(args, clickhouse.Named("limit", limit))
	}
	q += " OFFSET {offset:Int64}"
	args = append(args, clickhouse.Named("offset", offset))
	rows, err := s.selectObjRows(ctx, objValue(req.MetadataOnly), q, args...)
	if err != nil {
		return storage.ObjQueryRes{}, err
	}
	objs := make([]storage.ObjSchema, len(rows))
	for i := range rows {
		objs[i] = rows[i].schema(req.IncludeStorageSize)
	}
	if req.IncludeTagsAndAliases {
		if err := s.attachLabels(ctx, req.ProjectID, objs); err != nil {
			return storage.ObjQueryRes{}, err
		}
	}
	return storage.ObjQueryRes{Objs: objs}, nil
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
