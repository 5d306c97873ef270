package storekit

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
)

// MaxRefHops bounds how many refs one resolution may pass through; content
// addressing rules out cycles, this bounds hand-made ones.
const MaxRefHops = 32

// RefKey addresses a value a ref walk needs: an object version (Name and
// Digest) or a table row (Digest only, Name empty).
type RefKey struct {
	Project, Name, Digest string
}

// RefLoader fetches ref targets for ReadRefs, a call per kind and hop.
// Each method returns the values found; keys missing from the answer
// (never stored, deleted) resolve to null, and extra keys are ignored.
type RefLoader interface {
	// ObjectValues reads the live object versions of keys by exact
	// (project, name, digest).
	ObjectValues(ctx context.Context, keys []RefKey) (map[RefKey]json.RawMessage, error)
	// RowValues reads the stored table rows of keys by (project, digest).
	RowValues(ctx context.Context, keys []RefKey) (map[RefKey]json.RawMessage, error)
}

// refWalk is the state of one ref being resolved.
type refWalk struct {
	next *refs.Ref   // target to fetch next; nil once finished
	path []refs.Edge // edges to walk from that target (a table target's path starts with its id edge)
	val  json.RawMessage
}

// ReadRefs resolves uris as storage.ObjectStore.ReadRefs does: every hop
// fetches what each unfinished walk needs next, and a ref that leads where
// canRead refuses, or to nothing stored, resolves to null.
func ReadRefs(ctx context.Context, load RefLoader, canRead func(projectID string) bool, uris []string) ([]json.RawMessage, error) {
	walks, err := startWalks(uris)
	if err != nil {
		return nil, err
	}
	for hop := 0; hop < MaxRefHops; hop++ {
		objs, rows := wantedRefs(walks, canRead)
		if len(objs)+len(rows) == 0 {
			break
		}
		objVals, rowVals, err := fetchRefTargets(ctx, load, objs, rows)
		if err != nil {
			return nil, err
		}
		advanceWalks(walks, objVals, rowVals)
	}
	out := make([]json.RawMessage, len(walks))
	for i, w := range walks {
		if w.next == nil {
			out[i] = w.val
		}
	}
	return out, nil
}

func startWalks(uris []string) ([]refWalk, error) {
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
	return walks, nil
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
func wantedRefs(walks []refWalk, canRead func(string) bool) (objs, rows []RefKey) {
	seenObj, seenRow := map[RefKey]bool{}, map[RefKey]bool{}
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
			rows = appendKey(rows, seenRow, RefKey{Project: n.ProjectID, Digest: w.path[0].Value})
		case (n.Kind == refs.KindObject || n.Kind == refs.KindOp) && storage.IsContentDigest(n.Version):
			objs = appendKey(objs, seenObj, RefKey{Project: n.ProjectID, Name: n.Name, Digest: n.Version})
		default:
			*w = refWalk{}
		}
	}
	return sortedKeys(objs), sortedKeys(rows)
}

func appendKey(keys []RefKey, seen map[RefKey]bool, k RefKey) []RefKey {
	if seen[k] {
		return keys
	}
	seen[k] = true
	return append(keys, k)
}

// sortedKeys orders keys so that loaders see the same batch for the same
// refs, whatever order the walks reached them in.
func sortedKeys(keys []RefKey) []RefKey {
	slices.SortFunc(keys, compareRefKeys)
	return keys
}

func compareRefKeys(a, b RefKey) int {
	return cmp.Or(cmp.Compare(a.Project, b.Project), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Digest, b.Digest))
}

func fetchRefTargets(ctx context.Context, load RefLoader, objs, rows []RefKey) (objVals, rowVals map[RefKey]json.RawMessage, err error) {
	if len(objs) > 0 {
		if objVals, err = load.ObjectValues(ctx, objs); err != nil {
			return nil, nil, err
		}
	}
	if len(rows) > 0 {
		if rowVals, err = load.RowValues(ctx, rows); err != nil {
			return nil, nil, err
		}
	}
	return objVals, rowVals, nil
}

// advanceWalks walks each waiting ref from its fetched target.
func advanceWalks(walks []refWalk, objs, rows map[RefKey]json.RawMessage) {
	for i := range walks {
		w := &walks[i]
		if w.next == nil {
			continue
		}
		var val json.RawMessage
		path := w.path
		if w.next.Kind == refs.KindTable {
			val, path = rows[RefKey{Project: w.next.ProjectID, Digest: path[0].Value}], path[1:]
		} else {
			val = objs[RefKey{Project: w.next.ProjectID, Name: w.next.Name, Digest: w.next.Version}]
		}
		if val == nil {
			*w = refWalk{} // missing or deleted
			continue
		}
		step := refs.Walk(val, path)
		*w = refWalk{next: step.Next, path: step.Path(), val: step.Val}
	}
}
