package storekit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/refs"
)

// sortValue is a row's value at a sort path, ranked as the reference ranks
// table sorts: null or missing, then numbers (booleans as 0 and 1), then
// text (strings, and objects and arrays as minified JSON).
type sortValue struct {
	rank int
	num  float64
	text string
}

// sortEntries orders entries by the keys; ties keep table order in both
// directions, as Python's stable sorts do.
func sortEntries(entries []TableEntry, keys []rowSortKey) {
	if len(keys) == 0 {
		return
	}
	vals := make(map[string][]sortValue, len(entries))
	for _, e := range entries {
		if _, done := vals[e.Digest]; done {
			continue
		}
		row := make([]sortValue, len(keys))
		for k, key := range keys {
			row[k] = extractSortValue(json.RawMessage(e.Val), key.path)
		}
		vals[e.Digest] = row
	}
	slices.SortStableFunc(entries, func(a, b TableEntry) int {
		va, vb := vals[a.Digest], vals[b.Digest]
		for k, key := range keys {
			c := cmp.Or(cmp.Compare(va[k].rank, vb[k].rank), cmp.Compare(va[k].num, vb[k].num), cmp.Compare(va[k].text, vb[k].text))
			if key.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// extractSortValue walks path through raw: a name selects an object member,
// an integer an array element; anything else reaches nothing (null).
func extractSortValue(raw json.RawMessage, path []string) sortValue {
	for _, part := range path {
		if member, ok := refs.ObjectMember(raw, part); ok {
			raw = member
			continue
		}
		elems, isArray := refs.ArrayElements(raw)
		idx, isIndex := refs.ParseIndex(part)
		if !isArray || !isIndex || idx < 0 || idx >= int64(len(elems)) {
			return sortValue{}
		}
		raw = elems[idx]
	}
	return rankValue(bytes.TrimSpace(raw))
}

func rankValue(raw json.RawMessage) sortValue {
	if len(raw) == 0 {
		return sortValue{}
	}
	switch raw[0] {
	case 'n':
		return sortValue{}
	case 't':
		return sortValue{rank: 1, num: 1}
	case 'f':
		return sortValue{rank: 1}
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s) // stored rows are valid JSON
		return sortValue{rank: 2, text: s}
	case '{', '[':
		d, _ := digest.Dumps(raw, digest.Options{Compact: true})
		return sortValue{rank: 2, text: string(d.Text)}
	}
	f, _ := strconv.ParseFloat(string(raw), 64) // overflow gives ±Inf, as Python's float does
	return sortValue{rank: 1, num: f}
}
