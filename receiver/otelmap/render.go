package otelmap

import (
	"encoding/json"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftdev/weft/storage"
)

// attrEntry is one top-level key of the call attributes.
type attrEntry struct {
	key string
	v   val
}

// usageCount is one counter of summary.usage[model].
type usageCount struct {
	field string
	n     int64
}

// render writes the JSON columns of the call. They are built in one
// scratch buffer and copied out with a single allocation per span.
func (m *Mapper) render(st *mapState, sc *scopeCtx, span ptrace.Span, call *storage.Call) {
	v := &st.view
	in, inKey := v.first(m.conv.inputs)
	out, outKey := v.first(m.conv.outputs)
	st.attrs = m.attributeFields(v, st.attrs[:0])
	usage := m.usage(v, st.usage[:0])
	st.usage = usage
	model := modelKey(v, st.attrs)
	fallback := len(st.attrs) == 0 && inKey == nil && outKey == nil && len(usage) == 0

	b := st.buf[:0]
	var ends [5]int
	b = m.appendAttributes(b, st, sc, fallback)
	ends[0] = len(b)
	b = appendInputs(b, v, in, inKey)
	ends[1] = len(b)
	if outKey != nil {
		b = appendOutput(b, v, out, outKey)
	}
	ends[2] = len(b)
	b = appendSummary(b, model, usage)
	ends[3] = len(b)
	b = m.appendDump(b, st, sc, span)
	ends[4] = len(b)
	st.buf = b

	all := make([]byte, len(b))
	copy(all, b)
	cut := func(from, to int) json.RawMessage { return all[from:to:to] }
	call.Attributes = cut(0, ends[0])
	call.Inputs = cut(ends[0], ends[1])
	if outKey != nil {
		call.Output = cut(ends[1], ends[2])
	}
	call.Summary = cut(ends[2], ends[3])
	call.OtelDump = cut(ends[3], ends[4])
}

// attributeFields collects the recognised attribute fields.
func (m *Mapper) attributeFields(v *spanView, out []attrEntry) []attrEntry {
	for _, fk := range m.conv.attrs {
		if x, _ := v.first(fk.keys); x.kind != valNone {
			out = append(out, attrEntry{key: fk.field, v: x})
		}
	}
	return out
}

// appendAttributes writes the recognised attribute fields (or, when the
// span matched no convention at all, its whole attribute tree), then the
// user's custom attributes merged at the top level, then the list of cut
// values under weft.truncated. The "weft" key is reserved for that.
func (m *Mapper) appendAttributes(b []byte, st *mapState, sc *scopeCtx, fallback bool) []byte {
	v := &st.view
	if fallback {
		for c := st.t.nodes[v.root].first; c != noNode; c = st.t.nodes[c].next {
			st.attrs = append(st.attrs, attrEntry{key: st.t.nodes[c].key, v: val{kind: valNode, n: c}})
		}
	}
	if x, _ := v.first(m.conv.custom); x.kind != valNone {
		for _, e := range v.members(x) {
			st.attrs = mergeEntry(st.attrs, e)
		}
	}
	truncated := len(st.t.truncated) + len(sc.resTrunc)
	b = append(b, '{')
	n := 0
	for _, e := range st.attrs {
		if truncated > 0 && e.key == "weft" {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendString(b, e.key, 0)
		b = append(b, ':')
		b = v.appendVal(b, e.v)
	}
	if truncated > 0 {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendTruncated(b, sc.resTrunc, st.t.truncated)
	}
	return append(b, '}')
}

// appendTruncated writes "weft":{"truncated":[keys...]}.
func appendTruncated(b []byte, lists ...[]string) []byte {
	b = append(b, `"weft":{"truncated":[`...)
	n := 0
	for _, l := range lists {
		for _, k := range l {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = appendString(b, k, 0)
		}
	}
	return append(b, "]}"...)
}

// mergeEntry sets e, replacing an entry of the same key in place (Python
// dict.update semantics, which Weave's custom attributes follow).
func mergeEntry(list []attrEntry, e attrEntry) []attrEntry {
	for i := range list {
		if list[i].key == e.key {
			list[i].v = e.v
			return list
		}
	}
	return append(list, e)
}

// members lists the members of an object-like value; others give none.
func (s *spanView) members(v val) []attrEntry {
	if v.kind == valNode && s.t.nodes[v.n].kind == kindObject {
		var out []attrEntry
		for c := s.t.nodes[v.n].first; c != noNode; c = s.t.nodes[c].next {
			out = append(out, attrEntry{key: s.t.nodes[c].key, v: val{kind: valNode, n: c}})
		}
		return out
	}
	var l leaf
	switch {
	case v.kind == valNode:
		l = s.t.leafOf(v.n)
	case v.kind == valPdata:
		l = leaf{pv: v.pv}
	case v.kind == valRaw:
		l = leaf{raw: v.raw, isRaw: true}
	}
	entries, _ := s.t.objectEntries(l)
	out := make([]attrEntry, 0, len(entries))
	for _, e := range entries {
		ev := val{kind: valRaw, raw: e.v.raw}
		if !e.v.isRaw {
			ev = val{kind: valPdata, pv: e.v.pv}
		}
		out = append(out, attrEntry{key: e.key, v: ev})
	}
	return out
}

// isObject reports whether v is written as a JSON object.
func (s *spanView) isObject(v val) bool {
	if v.kind == valNode && s.t.nodes[v.n].kind == kindObject {
		return s.t.listOrder(v.n) == nil
	}
	var l leaf
	switch v.kind {
	case valNode:
		l = s.t.leafOf(v.n)
	case valPdata:
		l = leaf{pv: v.pv}
	case valRaw:
		return len(v.raw) > 0 && v.raw[0] == '{'
	default:
		return false
	}
	if l.isRaw {
		return len(l.raw) > 0 && l.raw[0] == '{'
	}
	if l.pv.Type() == pcommon.ValueTypeMap {
		return true
	}
	return l.pv.Type() == pcommon.ValueTypeStr && s.embeddable(l.pv.Str()) && l.pv.Str()[0] == '{'
}

// appendInputs stores the value under its source key, except that a
// generic "input"/"inputs" object is the inputs itself.
func appendInputs(b []byte, v *spanView, in val, k *key) []byte {
	switch {
	case k == nil:
		return append(b, "{}"...)
	case k.generic && v.isObject(in):
		return v.appendVal(b, in)
	}
	b = append(b, '{')
	b = appendString(b, k.text, 0)
	b = append(b, ':')
	b = v.appendVal(b, in)
	return append(b, '}')
}

// appendOutput stores the value under its source key, except that a
// generic "output"/"outputs" value is the output itself, of any type.
func appendOutput(b []byte, v *spanView, out val, k *key) []byte {
	if k.generic {
		return v.appendVal(b, out)
	}
	b = append(b, '{')
	b = appendString(b, k.text, 0)
	b = append(b, ':')
	b = v.appendVal(b, out)
	return append(b, '}')
}

// usage collects the token counters; a total is derived from its parts
// when the span does not carry one.
func (m *Mapper) usage(v *spanView, out []usageCount) []usageCount {
	for _, fk := range m.conv.usage {
		for i := range fk.keys {
			if n, ok := v.int(v.get(&fk.keys[i])); ok {
				out = append(out, usageCount{field: fk.field, n: n})
				break
			}
		}
	}
	if _, ok := count(out, "total_tokens"); ok || len(out) == 0 {
		return out
	}
	for _, pair := range [...][2]string{{"prompt_tokens", "completion_tokens"}, {"input_tokens", "output_tokens"}} {
		a, okA := count(out, pair[0])
		c, okC := count(out, pair[1])
		if okA && okC {
			return append(out, usageCount{field: "total_tokens", n: a + c})
		}
	}
	return out
}

func count(us []usageCount, field string) (int64, bool) {
	for _, u := range us {
		if u.field == field {
			return u.n, true
		}
	}
	return 0, false
}

// modelKey is the summary.usage key: the model attribute, else the model
// in the model parameters, else "usage" (which never prices).
func modelKey(v *spanView, attrs []attrEntry) string {
	for _, e := range attrs {
		if e.key == modelField {
			if s := v.str(e.v); s != "" {
				return s
			}
		}
	}
	for _, e := range attrs {
		if e.key == modelParamField {
			if s := v.str(v.step(e.v, "model")); s != "" {
				return s
			}
		}
	}
	return defaultUsageKey
}

// appendSummary writes {"usage":{model:{counters}}}, or {} without usage.
func appendSummary(b []byte, model string, usage []usageCount) []byte {
	if len(usage) == 0 {
		return append(b, "{}"...)
	}
	b = append(b, `{"usage":{`...)
	b = appendString(b, model, 0)
	b = append(b, ":{"...)
	for i, u := range usage {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, u.field, 0)
		b = append(b, ':')
		b = strconv.AppendInt(b, u.n, 10)
	}
	return append(b, "}}}"...)
}
