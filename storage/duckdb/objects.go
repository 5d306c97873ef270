package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

// preparedObj is an object version ready to store.
type preparedObj struct {
	digest.ObjectResult
	dump string // the stored text
}

// CreateObject implements storage.ObjectStore.
func (s *Store) CreateObject(ctx context.Context, req storage.ObjCreateReq) (storage.ObjCreateRes, error) {
	o := req.Obj
	p, err := prepareObject(o)
	if err != nil {
		return storage.ObjCreateRes{}, err
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error { return writeObjectVersion(ctx, tx, o, p, writeTime()) })
	if err != nil {
		return storage.ObjCreateRes{}, err
	}
	return storage.ObjCreateRes{Digest: p.Digest, ObjectID: o.ObjectID}, nil
}

func prepareObject(o storage.ObjSchemaForInsert) (preparedObj, error) {
	if o.ProjectID == "" {
		return preparedObj{}, fmt.Errorf("obj.project_id is required: %w", storage.ErrInvalidArgument)
	}
	if err := storage.ValidateObjectID(o.ObjectID); err != nil {
		return preparedObj{}, err
	}
	if len(o.Val) == 0 {
		return preparedObj{}, fmt.Errorf("obj.val is required (any JSON value): %w", storage.ErrInvalidArgument)
	}
	builtin := o.BuiltinObjectClass
	if builtin == nil {
		builtin = o.SetBaseObjectClass
	}
	res, err := digest.Object(o.Val, derefStr(builtin))
	if err != nil {
		return preparedObj{}, fmt.Errorf("obj.val: %w: %w", storage.ErrInvalidArgument, err)
	}
	if err := storage.CheckExpectedDigest("obj "+o.ObjectID, o.ExpectedDigest, res.Digest); err != nil {
		return preparedObj{}, err
	}
	p := preparedObj{ObjectResult: res, dump: string(res.Text)}
	if !res.Finite {
		// Python's text holds Infinity, which no JSON reader accepts back.
		p.dump = string(res.Val)
	}
	return p, nil
}

// writeObjectVersion applies the reference's create rules: a live digest
// only becomes latest again; otherwise the version gets the next index
// (deleted versions count), reviving a deleted row of the same digest.
func writeObjectVersion(ctx context.Context, tx *sql.Tx, o storage.ObjSchemaForInsert, p preparedObj, now time.Time) error {
	versions, err := loadVersions(ctx, tx, o.ProjectID, o.ObjectID)
	if err != nil {
		return err
	}
	existing := slices.IndexFunc(versions, func(v versionMeta) bool { return v.digest == p.Digest })
	if existing >= 0 && !versions[existing].deleted {
		return setLatest(ctx, tx, o.ProjectID, o.ObjectID, p.Digest)
	}
	if err := checkTypeCollision(o.ObjectID, versions, p); err != nil {
		return err
	}
	if err := setLatest(ctx, tx, o.ProjectID, o.ObjectID, ""); err != nil {
		return err
	}
	args := []any{p.Kind, nullStrPtr(p.BaseObjectClass), nullStrPtr(p.LeafObjectClass), p.dump, int64(len(p.dump)),
		int64(len(versions)), now, nullStrPtr(o.WBUserID), o.ProjectID, o.ObjectID, p.Digest}
	q := `UPDATE object_versions SET kind = ?, base_object_class = ?, leaf_object_class = ?, val_dump = ?,
		size_bytes = ?, version_index = ?, created_at = ?, wb_user_id = ?, is_latest = true, deleted_at = NULL
		WHERE project_id = ? AND object_id = ? AND digest = ?`
	if existing < 0 {
		q = `INSERT INTO object_versions (kind, base_object_class, leaf_object_class, val_dump, size_bytes,
			version_index, created_at, wb_user_id, project_id, object_id, digest, is_latest)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, true)`
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("write object %s:%s: %w", o.ObjectID, p.Digest, err)
	}
	return nil
}

// versionMeta is what create and delete need to know of each version.
type versionMeta struct {
	digest, kind string
	base, leaf   *string
	index        int64
	created      time.Time
	latest       bool
	deleted      bool
}

func loadVersions(ctx context.Context, q sqlQuerier, projectID, objectID string) ([]versionMeta, error) {
	rows, err := q.QueryContext(ctx, `SELECT digest, kind, base_object_class, leaf_object_class, version_index,
		created_at, is_latest, deleted_at IS NOT NULL FROM object_versions WHERE project_id = ? AND object_id = ?`,
		projectID, objectID)
	if err != nil {
		return nil, fmt.Errorf("load versions of %s: %w", objectID, err)
	}
	defer rows.Close()
	var out []versionMeta
	for rows.Next() {
		var v versionMeta
		var base, leaf sql.NullString
		if err := rows.Scan(&v.digest, &v.kind, &base, &leaf, &v.index, &v.created, &v.latest, &v.deleted); err != nil {
			return nil, err
		}
		v.base, v.leaf = strPtr(base), strPtr(leaf)
		out = append(out, v)
	}
	return out, rows.Err()
}

// checkTypeCollision refuses a new version whose base class differs from
// the live versions of the same kind: refs carry no type, so one name
// must keep one type.
func checkTypeCollision(objectID string, versions []versionMeta, p preparedObj) error {
	describe := func(c *string) string {
		if c == nil {
			return "a generic (untyped) object"
		}
		return "a " + *c
	}
	for _, v := range versions {
		if v.deleted || v.kind != p.Kind || sameClass(v.base, p.BaseObjectClass) {
			continue
		}
		return fmt.Errorf("cannot publish %q as %s: that name is already used by %s in this project; publish this object under a different name: %w",
			objectID, describe(p.BaseObjectClass), describe(v.base), storage.ErrInvalidArgument)
	}
	return nil
}

// setLatest makes digest the latest version ("" clears the flag).
func setLatest(ctx context.Context, tx *sql.Tx, projectID, objectID, digest string) error {
	_, err := tx.ExecContext(ctx, `UPDATE object_versions SET is_latest = (digest = ?)
		WHERE project_id = ? AND object_id = ? AND (is_latest OR digest = ?)`, digest, projectID, objectID, digest)
	if err != nil {
		return fmt.Errorf("move latest of %s: %w", objectID, err)
	}
	return nil
}

// sqlQuerier is what both *sql.DB and *sql.Tx offer for reads.
type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// inWriteTx runs fn in a transaction under the single-writer lock.
func (s *Store) inWriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w: %w", storage.ErrUnavailable, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// writeTime is the created_at/deleted_at of a write, at the microsecond
// precision DuckDB keeps, so values read back compare equal.
func writeTime() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

func sameClass(a, b *string) bool {
	return (a == nil) == (b == nil) && derefStr(a) == derefStr(b)
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// DeleteObjects implements storage.ObjectStore.
func (s *Store) DeleteObjects(ctx context.Context, req storage.ObjDeleteReq) (storage.ObjDeleteRes, error) {
	if len(req.Digests) > storage.MaxDeleteDigests {
		return storage.ObjDeleteRes{}, fmt.Errorf("obj delete names %d digests; delete %d or fewer at a time: %w",
			len(req.Digests), storage.MaxDeleteDigests, storage.ErrInvalidArgument)
	}
	var res storage.ObjDeleteRes
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		versions, err := loadVersions(ctx, tx, req.ProjectID, req.ObjectID)
		if err != nil {
			return err
		}
		doomed, err := matchDeletes(req, versions)
		if err != nil {
			return err
		}
		res.NumDeleted = len(doomed)
		for _, v := range doomed {
			res.DeletedVersions = append(res.DeletedVersions,
				storage.DeletedObjVersion{Digest: v.digest, BaseObjectClass: v.base, LeafObjectClass: v.leaf})
		}
		return softDelete(ctx, tx, req.ProjectID, req.ObjectID, versions, doomed)
	})
	return res, err
}

// matchDeletes picks the live versions the request names (all when it
// names none); every distinct selector must match a version.
func matchDeletes(req storage.ObjDeleteReq, versions []versionMeta) ([]versionMeta, error) {
	var doomed []versionMeta
	for _, v := range versions {
		if !v.deleted && (len(req.Digests) == 0 || slices.ContainsFunc(req.Digests, func(sel string) bool {
			return selectorMatches(sel, v)
		})) {
			doomed = append(doomed, v)
		}
	}
	if len(doomed) == 0 {
		return nil, fmt.Errorf("object %s (%v) not found when deleting: %w", req.ObjectID, req.Digests, storage.ErrNotFound)
	}
	named := distinctSorted(req.Digests)
	if len(req.Digests) > 0 && len(named) != len(doomed) {
		return nil, fmt.Errorf("delete request contains %d digests, but found %d objects to delete: %w",
			len(named), len(doomed), storage.ErrNotFound)
	}
	return doomed, nil
}

// selectorMatches reports whether a delete selector (digest, latest, v<N>) names v.
func selectorMatches(sel string, v versionMeta) bool {
	if sel == "latest" {
		return v.latest
	}
	if n, ok := storage.VersionIndex(sel); ok {
		return v.index == n
	}
	return v.digest == sel
}

// softDelete marks versions deleted, drops their tags and aliases, and
// moves latest to the newest survivor when latest went.
func softDelete(ctx context.Context, tx *sql.Tx, projectID, objectID string, versions, doomed []versionMeta) error {
	digests := make([]string, len(doomed))
	latestGone := false
	for i, v := range doomed {
		digests[i] = v.digest
		latestGone = latestGone || v.latest
	}
	now, scope := writeTime(), []any{projectID, objectID, digests}
	for _, st := range []struct {
		q    string
		args []any
	}{
		{`UPDATE object_versions SET deleted_at = ?, is_latest = false
			WHERE project_id = ? AND object_id = ? AND digest IN (SELECT unnest(?::VARCHAR[]))`, append([]any{now}, scope...)},
		{`DELETE FROM object_tags WHERE project_id = ? AND object_id = ? AND digest IN (SELECT unnest(?::VARCHAR[]))`, scope},
		{`DELETE FROM object_aliases WHERE project_id = ? AND object_id = ? AND digest IN (SELECT unnest(?::VARCHAR[]))`, scope},
	} {
		if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
			return fmt.Errorf("delete versions of %s: %w", objectID, err)
		}
	}
	if !latestGone {
		return nil
	}
	var newest *versionMeta
	for i, v := range versions {
		if v.deleted || slices.Contains(digests, v.digest) {
			continue
		}
		if newest == nil || v.created.After(newest.created) || v.created.Equal(newest.created) && v.index > newest.index {
			newest = &versions[i]
		}
	}
	if newest == nil {
		return nil
	}
	return setLatest(ctx, tx, projectID, objectID, newest.digest)
}
