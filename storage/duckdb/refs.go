package duckdb

import (
	"context"
	"encoding/json"
	"fmt"

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

// ReadRefs implements storage.ObjectStore.
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

// fetchRefTargets fills the maps with the live values found.
func (s *Store) fetchRefTargets(ctx context.Context, objs, rows map[refKey]json.RawMessage) error {
	var op, on, od, rp, rd []string
	for k := range objs {
		op, on, od = append(op, k.project), append(on, k.name), append(od, k.digest)
	}
	for k := range rows {
		rp, rd = append(rp, k.project), append(rd, k.digest)
	}
	if len(op) > 0 {
		err := s.scanRefValues(ctx, objs, `SELECT o.project_id, o.object_id, o.digest, o.val_dump FROM object_versions o
			JOIN (SELECT unnest(?::VARCHAR[]) AS p, unnest(?::VARCHAR[]) AS n, unnest(?::VARCHAR[]) AS d) k
			ON o.project_id = k.p AND o.object_id = k.n AND o.digest = k.d WHERE o.deleted_at IS NULL`, op, on, od)
		if err != nil {
			return err
		}
	}
	if len(rp) > 0 {
		return s.scanRefValues(ctx, rows, `SELECT r.project_id, '', r.digest, r.val_dump FROM table_rows r
			JOIN (SELECT unnest(?::VARCHAR[]) AS p, unnest(?::VARCHAR[]) AS d) k ON r.project_id = k.p AND r.digest = k.d`, rp, rd)
	}
	return nil
}

func (s *Store) scanRefValues(ctx context.Context, into map[refKey]json.RawMessage, q string, args ...any) error {
	res, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("resolve refs: %w", err)
	}
	defer res.Close()
	for res.Next() {
		var k refKey
		var val string
		if err := res.Scan(&k.project, &k.name, &k.digest, &val); err != nil {
			return fmt.Errorf("scan ref target: %w", err)
		}
		into[k] = json.RawMessage(val)
	}
	return res.Err()
}
