package otelmap

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// noNode marks the end of a child list.
const noNode int32 = -1

type nodeKind uint8

const (
	kindObject nodeKind = iota // children only
	kindValue                  // a pdata value
	kindRaw                    // JSON text taken from a JSON-object string
)

// jsonState caches whether a string leaf holds embeddable JSON text.
type jsonState uint8

const (
	jsonUnknown jsonState = iota
	jsonYes
	jsonNo
)

// node is one key of an unflattened attribute tree. Nodes live in a flat
// arena and link to each other by index, so building a tree for a span
// allocates nothing once the arena has grown.
type node struct {
	key   string
	kind  nodeKind
	json  jsonState
	pv    pcommon.Value
	raw   []byte
	first int32
	last  int32
	next  int32
	nkids int32
}

// tree is the arena for all attribute trees of one span (span, events,
// links). It is reset between spans.
type tree struct {
	nodes     []node
	maxValue  int      // string and bytes values longer than this are cut
	truncated []string // flat keys of cut values, in arrival order
}

// ConflictError reports attributes that cannot form a tree, e.g. both
// "a.b" = 1 and "a.b.c" = 2. Weave rejects such spans; so do we.
type ConflictError struct {
	Key  string // the flat key being inserted
	Path string // the path that already holds a value, or nested keys
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("attribute %q conflicts with %q: a key cannot hold both a value and nested keys; rename one of them (e.g. %q)",
		e.Key, e.Path, e.Path+".value")
}

// reset empties the tree for the next span. Nodes are overwritten, not
// cleared: clearing pointerful memory per span costs write barriers.
func (t *tree) reset() {
	t.nodes = t.nodes[:0]
	t.truncated = t.truncated[:0]
}

// release drops every reference into the request's pdata, so that a
// pooled tree does not keep a finished request alive.
func (t *tree) release() {
	clear(t.nodes[:cap(t.nodes)])
	t.nodes = t.nodes[:0]
	if cap(t.nodes) > maxKeptNodes {
		t.nodes = nil
	}
	t.truncated = t.truncated[:0]
}

// maxKeptNodes bounds the arena a pooled tree keeps between requests.
const maxKeptNodes = 1 << 14

func (t *tree) add(key string, kind nodeKind) int32 {
	t.nodes = append(t.nodes, node{key: key, kind: kind, first: noNode, last: noNode, next: noNode})
	return int32(len(t.nodes) - 1)
}

// newRoot starts an empty object tree and returns its root.
func (t *tree) newRoot() int32 { return t.add("", kindObject) }

func (t *tree) link(parent, child int32) {
	p := &t.nodes[parent]
	if p.last == noNode {
		p.first = child
	} else {
		t.nodes[p.last].next = child
	}
	p.last = child
	p.nkids++
}

func (t *tree) child(parent int32, key string) int32 {
	for c := t.nodes[parent].first; c != noNode; c = t.nodes[c].next {
		if t.nodes[c].key == key {
			return c
		}
	}
	return noNode
}

// leaf is a value about to be placed in the tree.
type leaf struct {
	pv    pcommon.Value
	raw   []byte
	isRaw bool
}

// insertMap adds every attribute of m under root, splitting keys on dots.
// prefix is prepended to keys recorded as truncated.
func (t *tree) insertMap(root int32, m pcommon.Map, prefix string) error {
	var err error
	m.Range(func(k string, v pcommon.Value) bool {
		if t.maxValue > 0 && exceeds(v, t.maxValue) {
			t.truncated = append(t.truncated, prefix+k)
		}
		err = t.insert(root, k, leaf{pv: v})
		return err == nil
	})
	return err
}

// insert places v at the dotted key under root. Walking through an object
// value (a kvlist or a JSON-object string) expands it and merges, as
// Weave's server does; walking through any other value is a conflict.
func (t *tree) insert(root int32, key string, v leaf) error {
	cur := root
	rest := key
	for {
		seg, tail, more := strings.Cut(rest, ".")
		if !more {
			return t.place(cur, seg, v, key, key)
		}
		c := t.child(cur, seg)
		switch {
		case c == noNode:
			c = t.add(seg, kindObject)
			t.link(cur, c)
		case t.nodes[c].kind != kindObject:
			if !t.expand(c) {
				return &ConflictError{Key: key, Path: key[:len(key)-len(tail)-1]}
			}
		}
		cur, rest = c, tail
	}
}

// place sets the child seg of parent to v. path names the child in errors.
func (t *tree) place(parent int32, seg string, v leaf, key, path string) error {
	c := t.child(parent, seg)
	if c == noNode {
		t.link(parent, t.newLeaf(seg, v))
		return nil
	}
	if t.nodes[c].kind != kindObject {
		// A repeated key: the last value wins.
		t.nodes[c] = t.leafNode(seg, v, t.nodes[c].next)
		return nil
	}
	entries, ok := t.objectEntries(v)
	if !ok {
		return &ConflictError{Key: key, Path: path}
	}
	for _, e := range entries {
		if err := t.place(c, e.key, e.v, key, path+"."+e.key); err != nil {
			return err
		}
	}
	return nil
}

func (t *tree) newLeaf(key string, v leaf) int32 {
	t.nodes = append(t.nodes, t.leafNode(key, v, noNode))
	return int32(len(t.nodes) - 1)
}

func (t *tree) leafNode(key string, v leaf, next int32) node {
	n := node{key: key, kind: kindValue, pv: v.pv, first: noNode, last: noNode, next: next}
	if v.isRaw {
		n.kind, n.raw = kindRaw, v.raw
	}
	return n
}

// expand turns an object-valued leaf into an object node in place.
func (t *tree) expand(c int32) bool {
	entries, ok := t.objectEntries(t.leafOf(c))
	if !ok {
		return false
	}
	n := &t.nodes[c]
	n.kind, n.pv, n.raw, n.json = kindObject, pcommon.Value{}, nil, jsonUnknown
	for _, e := range entries {
		t.link(c, t.newLeaf(e.key, e.v))
	}
	return true
}

func (t *tree) leafOf(c int32) leaf {
	n := &t.nodes[c]
	if n.kind == kindRaw {
		return leaf{raw: n.raw, isRaw: true}
	}
	return leaf{pv: n.pv}
}

type entry struct {
	key string
	v   leaf
}

// objectEntries lists the members of an object-like value: a kvlist, or a
// JSON object given as text. ok is false for anything else.
func (t *tree) objectEntries(v leaf) ([]entry, bool) {
	if v.isRaw {
		return rawEntries(v.raw)
	}
	switch v.pv.Type() {
	case pcommon.ValueTypeMap:
		m := v.pv.Map()
		out := make([]entry, 0, m.Len())
		m.Range(func(k string, mv pcommon.Value) bool {
			out = append(out, entry{key: k, v: leaf{pv: mv}})
			return true
		})
		return out, true
	case pcommon.ValueTypeStr:
		s := v.pv.Str()
		if t.maxValue > 0 && len(s) > t.maxValue {
			return nil, false
		}
		if s != "" && s[0] == '{' && isJSONText(s) {
			return rawEntries([]byte(s))
		}
	}
	return nil, false
}

// exceeds reports whether v holds a string or bytes value longer than max.
func exceeds(v pcommon.Value, max int) bool {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return len(v.Str()) > max
	case pcommon.ValueTypeBytes:
		return v.Bytes().Len() > max
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if exceeds(s.At(i), max) {
				return true
			}
		}
	case pcommon.ValueTypeMap:
		found := false
		v.Map().Range(func(_ string, mv pcommon.Value) bool {
			found = exceeds(mv, max)
			return !found
		})
		return found
	}
	return false
}
