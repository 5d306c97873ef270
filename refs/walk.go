package refs

import (
	"bytes"
	"encoding/json"
)

// Step is where a walk along an extra path stopped.
type Step struct {
	// Val is the value reached, or nil when the path leads nowhere (a
	// missing key, an index out of range, a non-container). A nil Val with
	// a nil Next means the ref resolves to null.
	Val json.RawMessage
	// Next is set when the walk met a ref string with path left to walk:
	// the caller fetches Next (with Next.Extra) and walks Rest from there.
	// For a table ref Rest starts with the id edge that names the row.
	Next *Ref
	Rest []Edge
}

// Walk applies path to val. key and attr select an object member (the last
// of repeated keys, as Python dicts keep), index selects a list element
// (negative indexes count from the end, as in Python). A ref string met
// before the path ends stops the walk so the caller can fetch its target.
func Walk(val json.RawMessage, path []Edge) Step {
	for i, e := range path {
		if r, ok := refString(val); ok {
			switch r.Kind {
			case KindObject, KindOp, KindTable:
				return Step{Next: &r, Rest: path[i:]}
			}
			return Step{}
		}
		val = follow(val, e)
		if val == nil {
			return Step{}
		}
	}
	return Step{Val: val}
}

// Path is the full path to walk after fetching s.Next: the ref's own
// extra path followed by what was left of the outer one.
func (s Step) Path() []Edge {
	if s.Next == nil {
		return nil
	}
	return append(append([]Edge(nil), s.Next.Extra...), s.Rest...)
}

func refString(val json.RawMessage) (Ref, bool) {
	val = bytes.TrimSpace(val)
	if len(val) == 0 || val[0] != '"' {
		return Ref{}, false
	}
	var s string
	if json.Unmarshal(val, &s) != nil || !IsRef(s) {
		return Ref{}, false
	}
	r, err := Parse(s)
	return r, err == nil
}

func follow(val json.RawMessage, e Edge) json.RawMessage {
	switch e.Kind {
	case EdgeKey, EdgeAttr:
		member, _ := ObjectMember(val, e.Value)
		return member
	case EdgeIndex:
		idx, ok := ParseIndex(e.Value)
		elems, isArray := ArrayElements(val)
		if !ok || !isArray {
			return nil
		}
		if idx < 0 {
			idx += int64(len(elems))
		}
		if idx < 0 || idx >= int64(len(elems)) {
			return nil
		}
		return elems[idx]
	}
	return nil // an id edge needs a table ref, handled by Walk
}
