package otelmap

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

type valKind uint8

const (
	valNone   valKind = iota
	valNode           // a tree node
	valPdata          // a value inside a kvlist or array
	valRaw            // JSON text
	valEvents         // the attribute trees of same-named span events
)

// val is the result of a lookup: a place in the attribute data that can
// be tested, converted or written as JSON without copying it first.
type val struct {
	kind valKind
	n    int32
	pv   pcommon.Value
	raw  []byte
	evs  []int32
}

// key is a compiled convention key.
type key struct {
	text    string
	segs    []string
	id      int    // index into the span's match table
	event   string // event name for "events.<name>" keys
	generic bool   // "input", "inputs", "output", "outputs"
}

// spanView is the attribute data of one span, indexed for lookups.
type spanView struct {
	t      *tree
	root   int32
	found  []int32 // per key id: the matching node, noNode, or deferred
	events []eventTree
}

type eventTree struct {
	name string
	root int32
}

// deferred marks keys that continue below a non-object value; they are
// resolved by walking segments.
const deferred int32 = -2

// get returns the value at k, or a valNone val.
func (s *spanView) get(k *key) val {
	switch f := s.found[k.id]; {
	case f >= 0:
		return val{kind: valNode, n: f}
	case f == deferred:
		if v := s.walk(k); v.kind != valNone {
			return v
		}
	}
	if k.event != "" {
		return s.eventList(k.event)
	}
	return val{}
}

func (s *spanView) walk(k *key) val {
	v := val{kind: valNode, n: s.root}
	for _, seg := range k.segs {
		if v = s.step(v, seg); v.kind == valNone {
			break
		}
	}
	return v
}

// match walks the span's attribute tree against the key trie from node n
// and trie node tn, recording every key found.
func (s *spanView) match(trie []trieNode, n, tn int32) {
	t := s.t
	for c := t.nodes[n].first; c != noNode; c = t.nodes[c].next {
		next, ok := trie[tn].kids[t.nodes[c].key]
		if !ok {
			continue
		}
		tnode := &trie[next]
		for _, id := range tnode.keys {
			s.found[id] = c
		}
		if len(tnode.below) == 0 {
			continue
		}
		if t.nodes[c].kind == kindObject {
			s.match(trie, c, next)
			continue
		}
		for _, id := range tnode.below {
			s.found[id] = deferred
		}
	}
}

func (s *spanView) eventList(name string) val {
	var evs []int32
	for _, e := range s.events {
		if e.name == name {
			evs = append(evs, e.root)
		}
	}
	if evs == nil {
		return val{}
	}
	return val{kind: valEvents, evs: evs}
}

// first returns the first present value among keys, and its key.
func (s *spanView) first(keys []key) (val, *key) {
	for i := range keys {
		if v := s.get(&keys[i]); s.present(v) {
			return v, &keys[i]
		}
	}
	return val{}, nil
}

// step descends one path segment.
func (s *spanView) step(v val, seg string) val {
	switch v.kind {
	case valNode:
		n := &s.t.nodes[v.n]
		switch n.kind {
		case kindObject:
			if c := s.t.child(v.n, seg); c != noNode {
				return val{kind: valNode, n: c}
			}
			return val{}
		case kindRaw:
			return stepRaw(n.raw, seg)
		}
		return s.stepPdata(n.pv, seg)
	case valPdata:
		return s.stepPdata(v.pv, seg)
	case valRaw:
		return stepRaw(v.raw, seg)
	case valEvents:
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(v.evs) {
			return val{kind: valNode, n: v.evs[i]}
		}
	}
	return val{}
}

func (s *spanView) stepPdata(pv pcommon.Value, seg string) val {
	switch pv.Type() {
	case pcommon.ValueTypeMap:
		if c, ok := pv.Map().Get(seg); ok {
			return val{kind: valPdata, pv: c}
		}
	case pcommon.ValueTypeSlice:
		sl := pv.Slice()
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < sl.Len() {
			return val{kind: valPdata, pv: sl.At(i)}
		}
	case pcommon.ValueTypeStr:
		if str := pv.Str(); s.embeddable(str) {
			return stepRaw([]byte(str), seg)
		}
	}
	return val{}
}

// embeddable reports whether a string attribute is JSON text that Weave
// would have parsed: it starts with '[' or '{' and is valid, and it was
// not cut by the size limit.
func (s *spanView) embeddable(str string) bool {
	if str == "" || (str[0] != '[' && str[0] != '{') {
		return false
	}
	if s.t.maxValue > 0 && len(str) > s.t.maxValue {
		return false
	}
	return isJSONText(str)
}

// present is Weave's "value found" test, made explicit: null, empty
// strings, empty lists and empty objects are absent; zero numbers and
// false are values (Weave drops them, which loses real zero counts).
func (s *spanView) present(v val) bool {
	switch v.kind {
	case valNode:
		n := &s.t.nodes[v.n]
		switch n.kind {
		case kindObject:
			return n.nkids > 0
		case kindRaw:
			return rawPresent(n.raw)
		}
		if n.pv.Type() == pcommon.ValueTypeStr && s.t.jsonLeaf(n, n.pv.Str()) {
			return rawPresent(n.pv.Str())
		}
		return s.pdataPresent(n.pv)
	case valPdata:
		return s.pdataPresent(v.pv)
	case valRaw:
		return rawPresent(v.raw)
	case valEvents:
		return len(v.evs) > 0
	}
	return false
}

func (s *spanView) pdataPresent(pv pcommon.Value) bool {
	switch pv.Type() {
	case pcommon.ValueTypeEmpty:
		return false
	case pcommon.ValueTypeStr:
		str := pv.Str()
		if s.embeddable(str) {
			return rawPresent(str)
		}
		return str != ""
	case pcommon.ValueTypeBytes:
		return pv.Bytes().Len() > 0
	case pcommon.ValueTypeSlice:
		return pv.Slice().Len() > 0
	case pcommon.ValueTypeMap:
		return pv.Map().Len() > 0
	}
	return true
}

// str converts a scalar to text (model names, ids); objects give "".
func (s *spanView) str(v val) string {
	switch v.kind {
	case valNode:
		n := &s.t.nodes[v.n]
		switch n.kind {
		case kindValue:
			return scalarString(n.pv)
		case kindRaw:
			return rawString(n.raw)
		}
	case valPdata:
		return scalarString(v.pv)
	case valRaw:
		return rawString(v.raw)
	}
	return ""
}

func scalarString(pv pcommon.Value) string {
	switch pv.Type() {
	case pcommon.ValueTypeStr, pcommon.ValueTypeInt, pcommon.ValueTypeDouble, pcommon.ValueTypeBool:
		return pv.AsString()
	}
	return ""
}

// int converts a count leniently: integers, integral text, and doubles
// (truncated). ok is false for anything else.
func (s *spanView) int(v val) (int64, bool) {
	pv, ok := s.scalar(v)
	if !ok {
		if raw := s.rawOf(v); raw != nil {
			return parseInt(strings.TrimSpace(string(raw)))
		}
		return 0, false
	}
	switch pv.Type() {
	case pcommon.ValueTypeInt:
		return pv.Int(), true
	case pcommon.ValueTypeDouble:
		return doubleToInt(pv.Double())
	case pcommon.ValueTypeStr:
		return parseInt(strings.TrimSpace(pv.Str()))
	}
	return 0, false
}

func (s *spanView) scalar(v val) (pcommon.Value, bool) {
	switch {
	case v.kind == valPdata:
		return v.pv, true
	case v.kind == valNode && s.t.nodes[v.n].kind == kindValue:
		return s.t.nodes[v.n].pv, true
	}
	return pcommon.Value{}, false
}

func (s *spanView) rawOf(v val) []byte {
	switch {
	case v.kind == valRaw:
		return v.raw
	case v.kind == valNode && s.t.nodes[v.n].kind == kindRaw:
		return s.t.nodes[v.n].raw
	}
	return nil
}

// truthy decides flags such as wandb.is_turn.
func (s *spanView) truthy(v val) bool {
	if pv, ok := s.scalar(v); ok {
		switch pv.Type() {
		case pcommon.ValueTypeBool:
			return pv.Bool()
		case pcommon.ValueTypeInt:
			return pv.Int() != 0
		case pcommon.ValueTypeStr:
			str := strings.TrimSpace(pv.Str())
			return str != "" && !strings.EqualFold(str, "false") && str != "0"
		}
	}
	return s.present(v)
}
