package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// labelTable is object_tags or object_aliases: versioned rows keyed by
// object and name (tags also by digest), removed by inserting a version
// with deleted = 1.
type labelTable struct{ name, column string }

func tagsTable() labelTable    { return labelTable{"object_tags", "tag"} }
func aliasesTable() labelTable { return labelTable{"object_aliases", "alias"} }

// labelRow is one label of one version.
type labelRow struct {
	objectID, digest, name string
	version                uint64
}

// AddObjectTags implements storage.ObjectStore.
func (s *Store) AddObjectTags(ctx context.Context, req storage.ObjTagsReq) error {
	if err := storekit.ValidateLabels(req.Tags, storage.ValidateTagName); err != nil {
		return err
	}
	return s.pointLabels(ctx, tagsTable(), req.ProjectID, req.ObjectID, req.Digest, req.Tags)
}

// RemoveObjectTags implements storage.ObjectStore; absent tags are no error.
func (s *Store) RemoveObjectTags(ctx context.Context, req storage.ObjTagsReq) error {
	if len(req.Tags) == 0 {
		return nil
	}
	unlock := s.projects.lock([]string{req.ProjectID})
	defer unlock()
	d, err := s.liveDigest(ctx, req.ProjectID, req.ObjectID, req.Digest)
	if errors.Is(err, storage.ErrNotFound) {
		d, err = req.Digest, nil // tags of a vanished version are gone already
	}
	if err != nil {
		return err
	}
	live, err := s.liveLabels(ctx, tagsTable(), req.ProjectID, "object_id = {object:String} AND digest = {digest:String} AND tag IN {names:Array(String)}",
		clickhouse.Named("object", req.ObjectID), clickhouse.Named("digest", d), clickhouse.Named("names", req.Tags))
	if err != nil {
		return err
	}
	return s.insertLabels(ctx, tagsTable(), req.ProjectID, live, true)
}

// SetObjectAliases implements storage.ObjectStore: each alias moves to the
// version named by req.Digest.
func (s *Store) SetObjectAliases(ctx context.Context, req storage.ObjAliasesReq) error {
	if err := storekit.ValidateLabels(req.Aliases, storage.ValidateAliasName); err != nil {
		return err
	}
	return s.pointLabels(ctx, aliasesTable(), req.ProjectID, req.ObjectID, req.Digest, req.Aliases)
}

// RemoveObjectAliases implements storage.ObjectStore.
func (s *Store) RemoveObjectAliases(ctx context.Context, req storage.ObjAliasesReq) error {
	if len(req.Aliases) == 0 {
		return nil
	}
	unlock := s.projects.lock([]string{req.ProjectID})
	defer unlock()
	live, err := s.liveLabels(ctx, aliasesTable(), req.ProjectID, "object_id = {object:String} AND alias IN {names:Array(String)}",
		clickhouse.Named("object", req.ObjectID), clickhouse.Named("names", req.Aliases))
	if err != nil {
		return err
	}
	return s.insertLabels(ctx, aliasesTable(), req.ProjectID, live, true)
}

// ListTags implements storage.ObjectStore.
func (s *Store) ListTags(ctx context.Context, projectID string) ([]string, error) {
	names, err := s.stringColumn(ctx, "list tags", "SELECT DISTINCT tag FROM object_tags FINAL WHERE project_id = {project:String} AND NOT deleted",
		clickhouse.Named("project", projectID))
	slices.Sort(names)
	return names, err
}

// ListAliases implements storage.ObjectStore. "latest" is listed while
// the project has a live version.
func (s *Store) ListAliases(ctx context.Context, projectID string) ([]string, error) {
	names, err := s.stringColumn(ctx, "list aliases", `SELECT DISTINCT alias FROM object_aliases FINAL
		WHERE project_id = {project:String} AND NOT deleted
		UNION DISTINCT SELECT 'latest' FROM object_versions FINAL WHERE project_id = {project:String} AND is_latest AND deleted_at IS NULL`,
		clickhouse.Named("project", projectID))
	slices.Sort(names)
	return names, err
}

// liveDigest resolves a selector (digest, latest, v<N>, alias) to the
// digest of a live version, or ErrNotFound.
func (s *Store) liveDigest(ctx context.Context, projectID, objectID, selector string) (string, error) {
	cond, args, err := s.versionMatch(ctx, projectID, objectID, selector)
	if err != nil {
		return "", err
	}
	args = append(args, clickhouse.Named("project", projectID), clickhouse.Named("object", objectID))
	found, err := s.stringColumn(ctx, "resolve version", `SELECT digest FROM object_versions FINAL WHERE project_id = {project:String}
		AND object_id = {object:String} AND deleted_at IS NULL AND `+cond+` LIMIT 1`, args...)
	if err != nil {
		return "", err
	}
	if len(found) == 0 {
		return "", fmt.Errorf("object version %s:%s not found: %w", objectID, selector, storage.ErrNotFound)
	}
	return found[0], nil
}

// pointLabels points names at the live version selector names, under the
// project's lock.
func (s *Store) pointLabels(ctx context.Context, lt labelTable, projectID, objectID, selector string, names []string) error {
	unlock := s.projects.lock([]string{projectID})
	defer unlock()
	d, err := s.liveDigest(ctx, projectID, objectID, selector)
	if err != nil {
		return err
	}
	return s.putLabels(ctx, lt, projectID, objectID, d, storekit.DistinctSorted(names))
}

// putLabels points names at digest, each as a version above any stored
// one of the same label (deleted ones included).
func (s *Store) putLabels(ctx context.Context, lt labelTable, projectID, objectID, digest string, names []string) error {
	scope := ""
	args := []any{clickhouse.Named("project", projectID), clickhouse.Named("object", objectID), clickhouse.Named("names", names)}
	if lt.column == "tag" {
		scope, args = " AND digest = {digest:String}", append(args, clickhouse.Named("digest", digest))
	}
	stored := map[string]uint64{}
	err := s.eachRow(ctx, "read "+lt.name, "SELECT "+lt.column+", max(version) FROM "+lt.name+
		" WHERE project_id = {project:String} AND object_id = {object:String} AND "+lt.column+" IN {names:Array(String)}"+scope+
		" GROUP BY "+lt.column, func(rows driver.Rows) error {
		var name string
		var v uint64
		err := rows.Scan(&name, &v)
		stored[name] = v
		return err
	}, args...)
	if err != nil {
		return err
	}
	rows := make([]labelRow, len(names))
	for i, n := range names {
		rows[i] = labelRow{objectID: objectID, digest: digest, name: n, version: stored[n]}
	}
	return s.insertLabels(ctx, lt, projectID, rows, false)
}

// liveLabels reads the project's live labels matching where.
func (s *Store) liveLabels(ctx context.Context, lt labelTable, projectID, where string, args ...any) ([]labelRow, error) {
	var out []labelRow
	err := s.eachRow(ctx, "read "+lt.name, "SELECT object_id, digest, "+lt.column+", version FROM "+lt.name+
		" FINAL WHERE project_id = {project:String} AND NOT deleted AND "+where, func(rows driver.Rows) error {
		var l labelRow
		err := rows.Scan(&l.objectID, &l.digest, &l.name, &l.version)
		out = append(out, l)
		return err
	}, append(args, clickhouse.Named("project", projectID))...)
	return out, err
}

// insertLabels writes rows again with versions above theirs, marked
// deleted or not.
func (s *Store) insertLabels(ctx context.Context, lt labelTable, projectID string, rows []labelRow, deleted bool) error {
	now := s.writeTime()
	var flag uint8
	if deleted {
		flag = 1
	}
	return s.insertBatch(ctx, lt.name, "project_id, object_id, digest, "+lt.column+", created_at, version, deleted", len(rows),
		func(i int) []any {
			r := rows[i]
			return []any{projectID, r.objectID, r.digest, r.name, now, s.versions.next(r.version), flag}
		})
}

// dropLabels removes the tags and aliases of deleted versions.
func (s *Store) dropLabels(ctx context.Context, projectID, objectID string, digests []string) error {
	for _, lt := range []labelTable{tagsTable(), aliasesTable()} {
		live, err := s.liveLabels(ctx, lt, projectID, "object_id = {object:String} AND digest IN {digests:Array(String)}",
			clickhouse.Named("object", objectID), clickhouse.Named("digests", digests))
		if err != nil {
			return err
		}
		if err := s.insertLabels(ctx, lt, projectID, live, true); err != nil {
			return err
		}
	}
	return nil
}

// attachLabels fills Tags and Aliases of objs (all of one project).
func (s *Store) attachLabels(ctx context.Context, projectID string, objs []storage.ObjSchema) error {
	if len(objs) == 0 {
		return nil
	}
	ids := storekit.ObjectIDs(objs)
	var names [2]map[storekit.LabelKey][]string
	for i, lt := range []labelTable{tagsTable(), aliasesTable()} {
		live, err := s.liveLabels(ctx, lt, projectID, "object_id IN {ids:Array(String)}", clickhouse.Named("ids", ids))
		if err != nil {
			return err
		}
		names[i] = map[storekit.LabelKey][]string{}
		for _, l := range live {
			key := storekit.LabelKey{ObjectID: l.objectID, Digest: l.digest}
			names[i][key] = append(names[i][key], l.name)
		}
	}
	storekit.ApplyLabels(objs, names[0], names[1])
	return nil
}
