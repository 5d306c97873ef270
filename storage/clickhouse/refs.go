package clickhouse

import (
	"context"
	"encoding/json"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage/storekit"
)

// ReadRefs implements storage.ObjectStore. Each hop fetches what every
// unfinished walk needs next, a query per project and kind.
func (s *Store) ReadRefs(ctx context.Context, canRead func(projectID string) bool, uris []string) ([]json.RawMessage, error) {
	return storekit.ReadRefs(ctx, refTargets{s}, canRead, uris)
}

// refTargets reads ref targets for storekit.ReadRefs.
type refTargets struct{ s *Store }

// ObjectValues looks keys up per project by name and digest lists and
// keeps only the exact (name, digest) pairs asked for.
func (t refTargets) ObjectValues(ctx context.Context, keys []storekit.RefKey) (map[storekit.RefKey]json.RawMessage, error) {
	out := map[storekit.RefKey]json.RawMessage{}
	for project, keys := range refKeysByProject(keys) {
		var names, digests []string
		for _, k := range keys {
			names, digests = append(names, k.Name), append(digests, k.Digest)
		}
		err := t.s.scanRefValues(ctx, out, keys, `SELECT object_id, digest, val_dump FROM object_versions FINAL
			WHERE project_id = {project:String} AND object_id IN {names:Array(String)} AND digest IN {digests:Array(String)}
			AND deleted_at IS NULL`, project, clickhouse.Named("names", storekit.DistinctSorted(names)), clickhouse.Named("digests", storekit.DistinctSorted(digests)))
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RowValues reads the table rows of keys, a query per project.
func (t refTargets) RowValues(ctx context.Context, keys []storekit.RefKey) (map[storekit.RefKey]json.RawMessage, error) {
	out := map[storekit.RefKey]json.RawMessage{}
	for project, keys := range refKeysByProject(keys) {
		digests := make([]string, len(keys))
		for i, k := range keys {
			digests[i] = k.Digest
		}
		err := t.s.scanRefValues(ctx, out, keys, `SELECT '', digest, val_dump FROM table_rows
			WHERE project_id = {project:String} AND digest IN {digests:Array(String)} LIMIT 1 BY digest`,
			project, clickhouse.Named("digests", storekit.DistinctSorted(digests)))
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func refKeysByProject(keys []storekit.RefKey) map[string][]storekit.RefKey {
	out := map[string][]storekit.RefKey{}
	for _, k := range keys {
		out[k.Project] = append(out[k.Project], k)
	}
	return out
}

// scanRefValues runs a query of (name, digest, value) rows in project and
// stores into out the values of the keys wanted.
func (s *Store) scanRefValues(ctx context.Context, out map[storekit.RefKey]json.RawMessage, wanted []storekit.RefKey,
	q, project string, args ...any) error {
	want := make(map[storekit.RefKey]bool, len(wanted))
	for _, k := range wanted {
		want[k] = true
	}
	return s.eachRow(ctx, "resolve refs", q, func(rows driver.Rows) error {
		k := storekit.RefKey{Project: project}
		var val string
		if err := rows.Scan(&k.Name, &k.Digest, &val); err != nil {
			return err
		}
		if want[k] {
			out[k] = json.RawMessage(val)
		}
		return nil
	}, append(args, clickhouse.Named("project", project))...)
}
