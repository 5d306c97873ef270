package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// CreateObject implements storage.ObjectStore.
func (s *Store) CreateObject(ctx context.Context, req storage.ObjCreateReq) (storage.ObjCreateRes, error) {
	o := req.Obj
	p, err := storekit.PrepareObject(o)
	if err != nil {
		return storage.ObjCreateRes{}, err
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error { return writeObjectVersion(ctx, tx, o, p, writeTime()) })
	if err != nil {
		return storage.ObjCreateRes{}, err
	}
	return storage.ObjCreateRes{Digest: p.Digest, ObjectID: o.ObjectID}, nil
}

// writeObjectVersion writes what storekit.PlanCreate decides, updating the
// row of a revived digest in place.
func writeObjectVersion(ctx context.Context, tx *sql.Tx, o storage.ObjSchemaForInsert, p storekit.PreparedObject, now time.Time) error {
	versions, err := loadVersions(ctx, tx, o.ProjectID, o.ObjectID)
	if err != nil {
		return err
	}
	plan, err := storekit.PlanCreate(o.ObjectID, versions, p)
	if err != nil {
		return err
	}
	if plan.Live {
		return setLatest(ctx, tx, o.ProjectID, o.ObjectID, p.Digest)
	}
	if err := setLatest(ctx, tx, o.ProjectID, o.ObjectID, ""); err != nil {
		return err
	}
	args := []any{p.Kind, nullStrPtr(p.BaseObjectClass), nullStrPtr(p.LeafObjectClass), p.Dump, int64(len(p.Dump)),
		plan.Index, now, nullStrPtr(o.WBUserID), o.ProjectID, o.ObjectID, p.Digest}
	q := `UPDATE object_versions SET kind = ?, base_object_class = ?, leaf_object_class = ?, val_dump = ?,
		size_bytes = ?, version_index = ?, created_at = ?, wb_user_id = ?, is_latest = true, deleted_at = NULL
		WHERE project_id = ? AND object_id = ? AND digest = ?`
	if plan.Existing < 0 {
		q = `INSERT INTO object_versions (kind, base_object_class, leaf_object_class, val_dump, size_bytes,
			version_index, created_at, wb_user_id, project_id, object_id, digest, is_latest)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, true)`
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("write object %s:%s: %w", o.ObjectID, p.Digest, err)
	}
	return nil
}

// loadVersions reads what create and delete need to know of each version.
func loadVersions(ctx context.Context, q sqlQuerier, projectID, objectID string) ([]storekit.VersionMeta, error) {
	rows, err := q.QueryContext(ctx, `SELECT digest, kind, base_object_class, leaf_object_class, version_index,
		created_at, is_latest, deleted_at IS NOT NULL FROM object_versions WHERE project_id = ? AND object_id = ?`,
		projectID, objectID)
	if err != nil {
		return nil, fmt.Errorf("load versions of %s: %w", objectID, err)
	}
	defer rows.Close()
	var out []storekit.VersionMeta
	for rows.Next() {
		var v storekit.VersionMeta
		var base, leaf sql.NullString
		if err := rows.Scan(&v.Digest, &v.Kind, &base, &leaf, &v.Index, &v.Created, &v.Latest, &v.Deleted); err != nil {
			return nil, err
		}
		v.Base, v.Leaf = strPtr(base), strPtr(leaf)
		out = append(out, v)
	}
	return out, rows.Err()
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

// writeTime is the created_at of a write, at the microsecond
// precision DuckDB keeps, so values read back compare equal.
func writeTime() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// DeleteObjects implements storage.ObjectStore.
func (s *Store) DeleteObjects(ctx context.Context, req storage.ObjDeleteReq) (storage.ObjDeleteRes, error) {
	if err := storekit.CheckDeleteSize(req); err != nil {
		return storage.ObjDeleteRes{}, err
	}
	var res storage.ObjDeleteRes
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		versions, err := loadVersions(ctx, tx, req.ProjectID, req.ObjectID)
		if err != nil {
			return err
		}
		doomed, err := storekit.MatchDeletes(req, versions)
		if err != nil {
			return err
		}
		res = storekit.DeleteResult(doomed)
		return softDelete(ctx, tx, req.ProjectID, req.ObjectID, versions, doomed)
	})
	return res, err
}

// softDelete marks versions deleted (storekit.DeleteStamp), drops their
// tags and aliases, and moves latest to the newest survivor when latest
// went.
func softDelete(ctx context.Context, tx *sql.Tx, projectID, objectID string, versions, doomed []storekit.VersionMeta) error {
	now, scope := storekit.DeleteStamp(time.Time{}, time.Now), []any{projectID, objectID, storekit.DigestsOf(doomed)}
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
	if next, ok := storekit.NextLatest(versions, doomed); ok {
		return setLatest(ctx, tx, projectID, objectID, next.Digest)
	}
	return nil
}
