package otelmap

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The JSON writer appends straight from pdata and the attribute tree to a
// byte slice: no intermediate maps, no reflection. Every string is cut to
// the tree's value limit and made valid UTF-8.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, cut to max bytes when max > 0.
func appendString(b []byte, s string, max int) []byte {
	if max > 0 && len(s) > max {
		// Cut at a rune boundary so the cut never invents a bad rune.
		for max > 0 && !utf8.RuneStart(s[max]) {
			max--
		}
		s = s[:max]
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendFloat writes finite numbers as JSON numbers and the others as the
// strings Weave writes for them.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"nan"`...)
	case math.IsInf(f, 1):
		return append(b, `"inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-inf"`...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64)
}

// appendPdata writes a pdata value. Strings inside kvlists and arrays stay
// strings: only top-level attribute strings are read as JSON.
func appendPdata(b []byte, v pcommon.Value, max int) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendString(b, v.Str(), max)
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		return appendFloat(b, v.Double())
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(b, v.Bool())
	case pcommon.ValueTypeBytes:
		raw := v.Bytes().AsRaw()
		if max > 0 && len(raw) > max {
			raw = raw[:max]
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, raw)
		return append(b, '"')
	case pcommon.ValueTypeSlice:
		return appendSlice(b, v.Slice(), max)
	case pcommon.ValueTypeMap:
		b = append(b, '{')
		first := true
		v.Map().Range(func(k string, mv pcommon.Value) bool {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, k, 0)
			b = append(b, ':')
			b = appendPdata(b, mv, max)
			return true
		})
		return append(b, '}')
	}
	return append(b, "null"...)
}

func appendSlice(b []byte, s pcommon.Slice, max int) []byte {
	b = append(b, '[')
	for i := 0; i < s.Len(); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPdata(b, s.At(i), max)
	}
	return append(b, ']')
}

// appendNode writes a tree node. Objects whose keys are exactly 0..n-1
// become arrays, as Weave turns "gen_ai.prompt.0.role" into a list.
func (t *tree) appendNode(b []byte, n int32) []byte {
	nd := &t.nodes[n]
	switch nd.kind {
	case kindRaw:
		return append(b, nd.raw...)
	case kindValue:
		if nd.pv.Type() == pcommon.ValueTypeStr {
			if s := nd.pv.Str(); t.jsonLeaf(nd, s) {
				return append(b, s...)
			}
		}
		return appendPdata(b, nd.pv, t.maxValue)
	}
	if order := t.listOrder(n); order != nil {
		b = append(b, '[')
		for i, c := range order {
			if i > 0 {
				b = append(b, ',')
			}
			b = t.appendNode(b, c)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for c := nd.first; c != noNode; c = t.nodes[c].next {
		if c != nd.first {
			b = append(b, ',')
		}
		b = appendString(b, t.nodes[c].key, 0)
		b = append(b, ':')
		b = t.appendNode(b, c)
	}
	return append(b, '}')
}

// jsonLeaf decides, once per node, whether a string leaf is embedded as
// JSON.
func (t *tree) jsonLeaf(nd *node, s string) bool {
	if nd.json == jsonUnknown {
		nd.json = jsonNo
		if s != "" && (s[0] == '[' || s[0] == '{') &&
			(t.maxValue <= 0 || len(s) <= t.maxValue) && isJSONText(s) {
			nd.json = jsonYes
		}
	}
	return nd.json == jsonYes
}

// listOrder returns the children of n in index order when their keys are
// exactly "0".."n-1", else nil.
func (t *tree) listOrder(n int32) []int32 {
	nd := &t.nodes[n]
	if nd.nkids == 0 {
		return nil
	}
	k := t.nodes[nd.first].key
	if k == "" || k[0] < '0' || k[0] > '9' {
		return nil // the common case, decided without allocating
	}
	order := make([]int32, nd.nkids)
	for i := range order {
		order[i] = noNode
	}
	for c := nd.first; c != noNode; c = t.nodes[c].next {
		i, ok := listIndex(t.nodes[c].key, len(order))
		if !ok || order[i] != noNode {
			return nil
		}
		order[i] = c
	}
	return order
}

func listIndex(k string, n int) (int, bool) {
	if k == "" || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	i, err := strconv.Atoi(k)
	if err != nil || i < 0 || i >= n {
		return 0, false
	}
	return i, true
}

// appendVal writes a lookup result.
func (s *spanView) appendVal(b []byte, v val) []byte {
	switch v.kind {
	case valNode:
		return s.t.appendNode(b, v.n)
	case valPdata:
		if v.pv.Type() == pcommon.ValueTypeStr && s.embeddable(v.pv.Str()) {
			return append(b, v.pv.Str()...)
		}
		return appendPdata(b, v.pv, s.t.maxValue)
	case valRaw:
		return append(b, v.raw...)
	case valEvents:
		b = append(b, '[')
		for i, e := range v.evs {
			if i > 0 {
				b = append(b, ',')
			}
			b = s.t.appendNode(b, e)
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}
