package duckdb

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftdev/weft/storage/storekit"
)

// ReadRefs implements storage.ObjectStore.
func (s *Store) ReadRefs(ctx context.Context, canRead func(projectID string) bool, uris []string) ([]json.RawMessage, error) {
	return storekit.ReadRefs(ctx, refTargets{s}, canRead, uris)
}

// refTargets reads ref targets for storekit.ReadRefs, a query per kind
// whatever the projects.
type refTargets struct{ s *Store }

// ObjectValues joins the keys with the live object versions.
func (t refTargets) ObjectValues(ctx context.Context, keys []storekit.RefKey) (map[storekit.RefKey]json.RawMessage, error) {
	var ps, ns, ds []string
	for _, k := range keys {
		ps, ns, ds = append(ps, k.Project), append(ns, k.Name), append(ds, k.Digest)
	}
	return t.s.scanRefValues(ctx, `SELECT o.project_id, o.object_id, o.digest, o.val_dump FROM object_versions o
		JOIN (SELECT unnest(?::VARCHAR[]) AS p, unnest(?::VARCHAR[]) AS n, unnest(?::VARCHAR[]) AS d) k
		ON o.project_id = k.p AND o.object_id = k.n AND o.digest = k.d WHERE o.deleted_at IS NULL`, ps, ns, ds)
}

// RowValues joins the keys with the stored table rows.
func (t refTargets) RowValues(ctx context.Context, keys []storekit.RefKey) (map[storekit.RefKey]json.RawMessage, error) {
	var ps, ds []string
	for _, k := range keys {
		ps, ds = append(ps, k.Project), append(ds, k.Digest)
	}
	return t.s.scanRefValues(ctx, `SELECT r.project_id, '', r.digest, r.val_dump FROM table_rows r
		JOIN (SELECT unnest(?::VARCHAR[]) AS p, unnest(?::VARCHAR[]) AS d) k ON r.project_id = k.p AND r.digest = k.d`, ps, ds)
}

// scanRefValues runs a query of (project, name, digest, value) rows.
func (s *Store) scanRefValues(ctx context.Context, q string, args ...any) (map[storekit.RefKey]json.RawMessage, error) {
	res, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("resolve refs: %w", err)
	}
	defer res.Close()
	out := map[storekit.RefKey]json.RawMessage{}
	for res.Next() {
		var k storekit.RefKey
		var val string
		if err := res.Scan(&k.Project, &k.Name, &k.Digest, &val); err != nil {
			return nil, fmt.Errorf("scan ref target: %w", err)
		}
		out[k] = json.RawMessage(val)
	}
	return out, res.Err()
}
