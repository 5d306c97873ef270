package traceapi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/wire"
)

// RefReader resolves refs for expand_columns; canRead decides which
// projects the caller may see (others resolve to null).
type RefReader interface {
	ReadRefs(ctx context.Context, canRead func(projectID string) bool, refs []string) ([]json.RawMessage, error)
}

// expander replaces ref strings at the expand_columns paths of a batch of
// calls with the objects they name; the original ref is kept as "_ref"
// inside an expanded object. Shallow paths go first so deeper ones can
// reach into what they expanded.
type expander struct {
	refs    RefReader
	canRead func(projectID string) bool
	paths   [][]string
}

func newExpander(r RefReader, canRead func(string) bool, columns []string) *expander {
	if r == nil || len(columns) == 0 {
		return nil
	}
	var paths [][]string
	for _, c := range columns {
		if parts := strings.Split(c, "."); len(parts) > 1 && slices.Contains(expandableRoots, parts[0]) {
			paths = append(paths, parts)
		}
	}
	slices.SortStableFunc(paths, func(a, b []string) int { return len(a) - len(b) })
	return &expander{refs: r, canRead: canRead, paths: paths}
}

var expandableRoots = []string{"inputs", "output", "attributes", "summary"}

// expand rewrites the calls in place; calls without a ref at any path
// are left byte for byte as they were.
func (e *expander) expand(ctx context.Context, calls []wire.CallSchema) error {
	docs := make([]*jsonObject, len(calls))
	changed := make([]bool, len(calls))
	for i := range calls {
		docs[i] = rootsOf(&calls[i])
	}
	for _, path := range e.paths {
		if err := e.expandPath(ctx, docs, changed, path); err != nil {
			return err
		}
	}
	for i := range calls {
		if !changed[i] {
			continue
		}
		if err := setRoots(&calls[i], docs[i]); err != nil {
			return err
		}
	}
	return nil
}

// slot is one place holding a ref string.
type slot struct {
	doc    int
	parent *jsonObject
	key    string
	ref    string
}

func (e *expander) expandPath(ctx context.Context, docs []*jsonObject, changed []bool, path []string) error {
	var slots []slot
	for i, d := range docs {
		if s, ok := findRef(d, path); ok {
			s.doc = i
			slots = append(slots, s)
		}
	}
	if len(slots) == 0 {
		return nil
	}
	uris := make([]string, len(slots))
	for i, s := range slots {
		uris[i] = s.ref
	}
	vals, err := e.refs.ReadRefs(ctx, e.canRead, uris)
	if err != nil {
		return fmt.Errorf("expand_columns %s: %w", strings.Join(path, "."), err)
	}
	for i, s := range slots {
		if vals[i] == nil {
			continue // unreadable or missing: keep the ref
		}
		v, err := decodeAny(vals[i])
		if err != nil {
			return err
		}
		if obj, ok := v.(*jsonObject); ok {
			obj.set("_ref", s.ref)
		}
		s.parent.set(s.key, v)
		changed[s.doc] = true
	}
	return nil
}

// findRef walks path through decoded JSON and reports the object member
// at its end when that member is an object or op ref string.
func findRef(doc *jsonObject, path []string) (slot, bool) {
	cur := doc
	for i, key := range path {
		v, ok := cur.get(key)
		if !ok {
			return slot{}, false
		}
		if i == len(path)-1 {
			s, isStr := v.(string)
			if !isStr || !refs.IsRef(s) || (!strings.Contains(s, "/object/") && !strings.Contains(s, "/op/")) {
				return slot{}, false
			}
			return slot{parent: cur, key: key, ref: s}, true
		}
		if cur, ok = v.(*jsonObject); !ok {
			return slot{}, false
		}
	}
	return slot{}, false
}

func decodeAny(raw json.RawMessage) (any, error) {
	v, err := decodeOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("expand_columns: %w", err)
	}
	return v, nil
}

// rootsOf decodes the JSON columns a path may start in.
func rootsOf(c *wire.CallSchema) *jsonObject {
	doc := &jsonObject{vals: map[string]any{}}
	for name, raw := range map[string]json.RawMessage{"inputs": c.Inputs, "output": c.Output, "attributes": c.Attributes, "summary": c.Summary} {
		if v, err := decodeAny(raw); err == nil {
			doc.set(name, v)
		}
	}
	return doc
}

func setRoots(c *wire.CallSchema, doc *jsonObject) error {
	targets := map[string]*json.RawMessage{"inputs": &c.Inputs, "output": &c.Output, "attributes": &c.Attributes, "summary": &c.Summary}
	for name, dst := range targets {
		v, _ := doc.get(name)
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("expand_columns: %w", err)
		}
		*dst = raw
	}
	return nil
}
