package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// AddObjectTags implements storage.ObjectStore.
func (s *Store) AddObjectTags(ctx context.Context, req storage.ObjTagsReq) error {
	if err := storekit.ValidateLabels(req.Tags, storage.ValidateTagName); err != nil {
		return err
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		digest, err := liveDigest(ctx, tx, req.ProjectID, req.ObjectID, req.Digest)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO object_tags (project_id, object_id, digest, tag, created_at)
			SELECT ?, ?, ?, unnest(?::VARCHAR[]), ? ON CONFLICT DO NOTHING`,
			req.ProjectID, req.ObjectID, digest, storekit.DistinctSorted(req.Tags), writeTime())
		if err != nil {
			return fmt.Errorf("add tags to %s:%s: %w", req.ObjectID, digest, err)
		}
		return nil
	})
}

// RemoveObjectTags implements storage.ObjectStore; absent tags are no error.
func (s *Store) RemoveObjectTags(ctx context.Context, req storage.ObjTagsReq) error {
	if len(req.Tags) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		digest, err := liveDigest(ctx, tx, req.ProjectID, req.ObjectID, req.Digest)
		if err != nil {
			digest = req.Digest // tags of a vanished version are gone already
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM object_tags WHERE project_id = ? AND object_id = ? AND digest = ?
			AND tag IN (SELECT unnest(?::VARCHAR[]))`, req.ProjectID, req.ObjectID, digest, req.Tags)
		if err != nil {
			return fmt.Errorf("remove tags of %s:%s: %w", req.ObjectID, digest, err)
		}
		return nil
	})
}

// SetObjectAliases implements storage.ObjectStore: each alias moves to the
// version named by req.Digest.
func (s *Store) SetObjectAliases(ctx context.Context, req storage.ObjAliasesReq) error {
	if err := storekit.ValidateLabels(req.Aliases, storage.ValidateAliasName); err != nil {
		return err
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		digest, err := liveDigest(ctx, tx, req.ProjectID, req.ObjectID, req.Digest)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO object_aliases (project_id, object_id, alias, digest, created_at)
			SELECT ?, ?, unnest(?::VARCHAR[]), ?, ?
			ON CONFLICT (project_id, object_id, alias) DO UPDATE SET digest = excluded.digest, created_at = excluded.created_at`,
			req.ProjectID, req.ObjectID, storekit.DistinctSorted(req.Aliases), digest, writeTime())
		if err != nil {
			return fmt.Errorf("set aliases of %s:%s: %w", req.ObjectID, digest, err)
		}
		return nil
	})
}

// RemoveObjectAliases implements storage.ObjectStore.
func (s *Store) RemoveObjectAliases(ctx context.Context, req storage.ObjAliasesReq) error {
	if len(req.Aliases) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM object_aliases WHERE project_id = ? AND object_id = ?
			AND alias IN (SELECT unnest(?::VARCHAR[]))`, req.ProjectID, req.ObjectID, req.Aliases)
		if err != nil {
			return fmt.Errorf("remove aliases of %s: %w", req.ObjectID, err)
		}
		return nil
	})
}

// ListTags implements storage.ObjectStore.
func (s *Store) ListTags(ctx context.Context, projectID string) ([]string, error) {
	return s.names(ctx, `SELECT DISTINCT tag FROM object_tags WHERE project_id = ?`, projectID)
}

// ListAliases implements storage.ObjectStore. "latest" is listed while
// the project has a live version.
func (s *Store) ListAliases(ctx context.Context, projectID string) ([]string, error) {
	return s.names(ctx, `SELECT DISTINCT alias FROM object_aliases WHERE project_id = ?
		UNION SELECT 'latest' WHERE EXISTS (SELECT 1 FROM object_versions WHERE project_id = ? AND is_latest)`,
		projectID, projectID)
}

// names runs a one-column query and sorts by code point, as Python does.
func (s *Store) names(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list names: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, rows.Err()
}

// liveDigest resolves a selector (digest, latest, v<N>, alias) to the
// digest of a live version, or ErrNotFound.
func liveDigest(ctx context.Context, tx *sql.Tx, projectID, objectID, selector string) (string, error) {
	cond, args := versionMatch(selector, true)
	var digest string
	err := tx.QueryRowContext(ctx, `SELECT digest FROM object_versions WHERE project_id = ? AND object_id = ?
		AND deleted_at IS NULL AND `+cond+` LIMIT 1`, append([]any{projectID, objectID}, args...)...).Scan(&digest)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("object version %s:%s not found: %w", objectID, selector, storage.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s:%s: %w", objectID, selector, err)
	}
	return digest, nil
}

// attachLabels fills Tags and Aliases of objs (all of one project).
func (s *Store) attachLabels(ctx context.Context, projectID string, objs []storage.ObjSchema) error {
	if len(objs) == 0 {
		return nil
	}
	ids := storekit.ObjectIDs(objs)
	tags, err := s.labels(ctx, "SELECT object_id, digest, tag FROM object_tags", projectID, ids)
	if err != nil {
		return err
	}
	aliases, err := s.labels(ctx, "SELECT object_id, digest, alias FROM object_aliases", projectID, ids)
	if err != nil {
		return err
	}
	storekit.ApplyLabels(objs, tags, aliases)
	return nil
}

// labels maps each version of the objects to its label names.
func (s *Store) labels(ctx context.Context, sel, projectID string, objectIDs []string) (map[storekit.LabelKey][]string, error) {
	rows, err := s.db.QueryContext(ctx, sel+" WHERE project_id = ? AND object_id IN (SELECT unnest(?::VARCHAR[]))", projectID, objectIDs)
	if err != nil {
		return nil, fmt.Errorf("load labels: %w", err)
	}
	defer rows.Close()
	out := map[storekit.LabelKey][]string{}
	for rows.Next() {
		var k storekit.LabelKey
		var name string
		if err := rows.Scan(&k.ObjectID, &k.Digest, &name); err != nil {
			return nil, err
		}
		out[k] = append(out[k], name)
	}
	return out, rows.Err()
}
