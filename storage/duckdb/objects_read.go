package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// objColumns are read by queryObjs in this order; %s is the value column.
const objColumns = `project_id, object_id, created_at, deleted_at, digest, version_index, is_latest,
	kind, base_object_class, leaf_object_class, %s, wb_user_id, size_bytes`

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
	cond, args := versionMatch(selector, true)
	q := objSelect(metadataOnly) + ` WHERE project_id = ? AND object_id = ? AND ` + cond +
		` ORDER BY created_at, version_index LIMIT 1`
	objs, err := r.s.queryObjs(ctx, q, append([]any{projectID, objectID}, args...))
	if err != nil || len(objs) == 0 {
		return storage.ObjSchema{}, false, err
	}
	return objs[0], true, nil
}

func (r objectReader) LiveVersions(ctx context.Context, req storage.ObjQueryReq, limit, offset int64) ([]storage.ObjSchema, error) {
	conds, args := objFilter(req.ProjectID, req.Filter)
	q := objSelect(req.MetadataOnly) + " WHERE " + strings.Join(conds, " AND ") + storekit.ObjectOrderBy(req.SortBy)
	if limit >= 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	q += " OFFSET ?"
	return r.s.queryObjs(ctx, q, append(args, offset))
}

func (r objectReader) AttachLabels(ctx context.Context, projectID string, objs []storage.ObjSchema) error {
	return r.s.attachLabels(ctx, projectID, objs)
}

// versionMatch is the SQL condition for the version a selector names:
// latest, v<N>, a content digest, or (withAlias) an alias name.
func versionMatch(selector string, withAlias bool) (string, []any) {
	if selector == "latest" {
		return "is_latest", nil
	}
	if n, ok := storage.VersionIndex(selector); ok {
		return "version_index = ?", []any{n}
	}
	if !withAlias || storage.IsContentDigest(selector) {
		return "digest = ?", []any{selector}
	}
	return `digest = coalesce((SELECT a.digest FROM object_aliases a WHERE a.project_id = object_versions.project_id
		AND a.object_id = object_versions.object_id AND a.alias = ?), ?)`, []any{selector, selector}
}

func objSelect(metadataOnly bool) string {
	val := "val_dump"
	if metadataOnly {
		val = "'{}'"
	}
	return "SELECT " + fmt.Sprintf(objColumns, val) + " FROM object_versions"
}

// queryObjs runs an object select (objSelect) and reads its rows, sizes
// included.
func (s *Store) queryObjs(ctx context.Context, q string, args []any) ([]storage.ObjSchema, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query objects: %w", err)
	}
	defer rows.Close()
	objs := []storage.ObjSchema{}
	for rows.Next() {
		var o storage.ObjSchema
		var deleted sql.NullTime
		var base, leaf, user sql.NullString
		var latest bool
		var val string
		var size int64
		if err := rows.Scan(&o.ProjectID, &o.ObjectID, &o.CreatedAt, &deleted, &o.Digest, &o.VersionIndex, &latest,
			&o.Kind, &base, &leaf, &val, &user, &size); err != nil {
			return nil, fmt.Errorf("scan object: %w", err)
		}
		o.CreatedAt = o.CreatedAt.UTC()
		o.DeletedAt, o.BaseObjectClass, o.LeafObjectClass, o.WBUserID = timePtr(deleted), strPtr(base), strPtr(leaf), strPtr(user)
		o.Val = json.RawMessage(val)
		if latest {
			o.IsLatest = 1
		}
		o.SizeBytes = &size
		objs = append(objs, o)
	}
	return objs, rows.Err()
}

// sameVersion correlates a label table with object_versions.
const sameVersion = `l.project_id = object_versions.project_id AND l.object_id = object_versions.object_id
	AND l.digest = object_versions.digest`

func objFilter(projectID string, f *storage.ObjectVersionFilter) ([]string, []any) {
	conds, args := []string{"project_id = ?", "deleted_at IS NULL"}, []any{projectID}
	add := func(cond string, arg ...any) {
		conds, args = append(conds, cond), append(args, arg...)
	}
	if f == nil {
		return conds, args
	}
	if f.IsOp != nil {
		add("(kind = 'op') = ?", *f.IsOp)
	}
	if f.LatestOnly {
		add("is_latest")
	}
	if len(f.ObjectIDs) > 0 {
		add("object_id IN (SELECT unnest(?::VARCHAR[]))", f.ObjectIDs)
	}
	if len(f.BaseObjectClasses) > 0 {
		add("base_object_class IN (SELECT unnest(?::VARCHAR[]))", f.BaseObjectClasses)
	}
	if len(f.ExcludeBaseObjectClasses) > 0 {
		add("(base_object_class IS NULL OR NOT base_object_class IN (SELECT unnest(?::VARCHAR[])))", f.ExcludeBaseObjectClasses)
	}
	if len(f.LeafObjectClasses) > 0 {
		add("leaf_object_class IN (SELECT unnest(?::VARCHAR[]))", f.LeafObjectClasses)
	}
	if len(f.Tags) > 0 {
		add("EXISTS (SELECT 1 FROM object_tags l WHERE "+sameVersion+" AND l.tag IN (SELECT unnest(?::VARCHAR[])))", f.Tags)
	}
	if len(f.Aliases) > 0 {
		// "latest" is no stored alias: it matches the latest version.
		add("(? AND is_latest OR EXISTS (SELECT 1 FROM object_aliases l WHERE "+sameVersion+
			" AND l.alias IN (SELECT unnest(?::VARCHAR[]))))", slices.Contains(f.Aliases, "latest"), f.Aliases)
	}
	return conds, args
}
