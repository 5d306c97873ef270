package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
)

// maxRefHops bounds how many refs one resolution may pass through; content
// addressing rules out cycles, this bounds hand-made ones.
const maxRefHops = 32

// refWalk is the state of one ref being resolved.
type refWalk struct {
	next *refs.Ref   // target to fetch next; nil once finished
	path []refs.Edge // edges to walk from that target (a table target's path starts with its id edge)
	val  json.RawMessage
}

// refKey addresses a fetched value: an object version (name, digest) or a
// table row (digest only).
type refKey struct {
	project, name, digest string
}

// ReadRefs implements storage.ObjectStore. Each hop fetches what every
// unfinished walk needs next, a query per project and kind.
func (s *Store) ReadRefs(ctx context.Context, canRead func(projectID string) bool, uris []string) ([]json.RawMessage, error) {
	if len(uris) > storage.MaxRefsPerReadBatch {
		return nil, fmt.Errorf("%d refs in one read; send at most %d: %w", len(uris), storage.MaxRefsPerReadBatch, storage.ErrInvalidArgument)
	}
	walks := make([]refWalk, len(uris))
	for i, u := range uris {
		r, err := refs.Parse(u)
		if err != nil {
			return nil, fmt.Errorf("refs[%d]: %w: %w", i, storage.ErrInvalidArgument, err)
		}
		if err := checkReadableRef(r); err != nil {
			return nil, fmt.Errorf("refs[%d] %s: %w", i, u, err)
		}
		walks[i] = refWalk{next: &r, path: r.Extra}
	}
	for hop := 0; hop < maxRefHops; hop++ {
		objs, rows := wantedRefs(walks, canRead)
		if len(objs)+len(rows) == 0 {
			break
		}
		if err := s.fetchRefTargets(ctx, objs, rows); err != nil {
			return nil, err
		}
		advanceWalks(walks, objs, rows)
	}
	out := make([]json.RawMessage, len(walks))
	for i, w := range walks {
		if w.next == nil {
			out[i] = w.val
		}
	}
	return out, nil
}

func checkReadableRef(r refs.Ref) error {
	switch r.Kind {
	case refs.KindObject, refs.KindOp:
	case refs.KindTable:
		return fmt.Errorf("table refs not supported; read rows with /table/query: %w", storage.ErrInvalidArgument)
	default:
		return fmt.Errorf("%s refs not supported; pass object or op refs: %w", r.Kind, storage.ErrInvalidArgument)
	}
	if r.Version == "latest" {
		return fmt.Errorf("reading refs with `latest` is not supported; use the version digest: %w", storage.ErrInvalidArgument)
	}
	if !storage.IsContentDigest(r.Version) {
		return fmt.Errorf("version %q is not a content digest; refs must name the digest, not v<N> or an alias: %w",
			r.Version, storage.ErrInvalidArgument)
	}
	return nil
}

// wantedRefs lists what the unfinished walks need next, finishing as null
// those that point where they may not read or cannot lead anywhere.
func wantedRefs(walks []refWalk, canRead func(string) bool) (objs, rows map[refKey]json.RawMessage) {
	objs, rows = map[refKey]json.RawMessage{}, map[refKey]json.RawMessage{}
	for i := range walks {
		w := &walks[i]
		if w.next == nil {
			continue
		}
		n := w.next
		switch {
		case !canRead(n.ProjectID):
			*w = refWalk{}
		case n.Kind == refs.KindTable && len(w.path) > 0 && w.path[0].Kind == refs.EdgeID:
			rows[refKey{project: n.ProjectID, digest: w.path[0].Value}] = nil
		case (n.Kind == refs.KindObject || n.Kind == refs.KindOp) && storage.IsContentDigest(n.Version):
			objs[refKey{project: n.ProjectID, name: n.Name, digest: n.Version}] = nil
		default:
			*w = refWalk{}
		}
	}
	return objs, rows
}

// advanceWalks walks each waiting ref from its fetched target.
func advanceWalks(walks []refWalk, objs, rows map[refKey]json.RawMessage) {
	for i := range walks {
		w := &walks[i]
		if w.next == nil {
			continue
		}
		var val json.RawMessage
		path := w.path
		if w.next.Kind == refs.KindTable {
			val, path = rows[refKey{project: w.next.ProjectID, digest: path[0].Value}], path[1:]
		} else {
			val = objs[refKey{project: w.next.ProjectID, name: w.next.Name, digest: w.next.Version}]
		}
		if val == nil {
			*w = refWalk{} // missing or deleted
			continue
		}
		step := refs.Walk(val, path)
		*w = refWalk{next: step.Next, path: step.Path(), val: step.Val}
	}
}

// fetchRefTargets fills the maps with the live values found. Object keys
// are looked up per project by name and digest lists, and only exact
// (name, digest) pairs are kept.
func (s *Store) fetchRefTargets(ctx context.Context, objs, rows map[refKey]json.RawMessage) error {
	for project, keys := range refKeysByProject(objs) {
		var names, digests []string
		for _, k := range keys {
			names, digests = append(names, k.name), append(digests, k.digest)
		}
		err := s.scanRefValues(ctx, objs, project, `SELECT object_id, digest, val_dump FROM object_versions FINAL
			WHERE project_id = {project:String} AND object_id IN {names:Array(String)} AND digest IN {digests:Array(String)}
			AND deleted_at IS NULL`, clickhouse.Named("names", distinctSorted(names)), clickhouse.Named("digests", distinctSorted(digests)))
		if err != nil {
			return err
		}
	}
	for project, keys := range refKeysByProject(rows) {
		digests := make([]string, len(keys))
		for i, k := range keys {
			digests[i] = k.digest
		}
		err := s.scanRefValues(ctx, rows, project, `SELECT '', digest, val_dump FROM table_rows
			WHERE project_id = {project:String} AND digest IN {digests:Array(String)} LIMIT 1 BY digest`,
			clickhouse.Named("digests", distinctSorted(digests)))
		if err != nil {
			return err
		}
	}
	return nil
}

func refKeysByProject(keys map[refKey]json.RawMessage) map[string][]refKey {
	out := map[string][]refKey{}
	for k := range keys {
		out[k.project] = append(out[k.project], k)
	}
	return out
}

// scanRefValues runs a query of (name, digest, value) rows in project and
// stores the values of the keys wanted.
func (s *Store) scanRefValues(ctx context.Context, into map[refKey]json.RawMessage, project, q string, args ...any) error {
	return s.eachRow(ctx, "resolve refs", q, func(rows driver.Rows) error {
		k := refKey{project: project}
		var val string
		if err := rows.Scan(&k.name, &k.digest, &val); err != nil {
			return err
		}
		if _, wanted := into[k]; wanted {
			into[k] = json.RawMessage(val)
		}
		return nil
	}, append(args, clickhouse.Named("project", project))...)
}
