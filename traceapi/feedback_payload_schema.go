package traceapi

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/weftdev/weft/storage"
)

// The JSON kinds a payload leaf is seen holding.
const (
	kindNull = 1 << iota
	kindBool
	kindNumber
	kindString
)

// feedbackPayloadPath is FeedbackPayloadPath.
type feedbackPayloadPath struct {
	JSONPath  string `json:"json_path"`
	ValueType string `json:"value_type"`
}

// discoverPayloadPaths lists the leaf paths of the payloads that
// /feedback/stats can read, sorted, each with the value type its values
// suggest. Keys holding a dot or only spaces are skipped, and so are
// paths through arrays of objects; an array of scalars is a leaf of its
// elements' kinds. Payloads that are not JSON are skipped.
func discoverPayloadPaths(payloads []json.RawMessage) []feedbackPayloadPath {
	kinds := map[string]int{}
	for _, p := range payloads {
		dec := json.NewDecoder(bytes.NewReader(p))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		collectLeaves(v, "", false, kinds)
	}
	paths := make([]string, 0, len(kinds))
	for p := range kinds {
		if feedbackJSONPath.MatchString(p) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	out := make([]feedbackPayloadPath, len(paths))
	for i, p := range paths {
		out[i] = feedbackPayloadPath{JSONPath: p, ValueType: valueTypeOf(kinds[p])}
	}
	return out
}

// collectLeaves adds the kinds of v's leaves under prefix; inArray marks
// a path below an array element, which stats cannot address.
func collectLeaves(v any, prefix string, inArray bool, kinds map[string]int) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if strings.Contains(k, ".") || strings.TrimSpace(k) == "" {
				continue
			}
			path := k
			if prefix != "" {
				path = prefix + "." + k
			}
			collectLeaves(child, path, inArray, kinds)
		}
	case []any:
		for i, el := range x {
			switch el.(type) {
			case map[string]any, []any:
				collectLeaves(el, prefix+"["+strconv.Itoa(i)+"]", true, kinds)
			default:
				collectLeaves(el, prefix, inArray, kinds)
			}
		}
	default:
		if prefix == "" || inArray {
			return
		}
		kinds[prefix] |= kindOf(x)
	}
}

func kindOf(v any) int {
	switch v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case json.Number:
		return kindNumber
	}
	return kindString
}

// valueTypeOf infers a path's value type: booleans, numbers, or else
// categories (mixed kinds are categories too); nulls go with either.
func valueTypeOf(k int) string {
	switch {
	case k&^(kindBool|kindNull) == 0:
		return storage.FeedbackBoolean
	case k&^(kindNumber|kindNull) == 0:
		return storage.FeedbackNumeric
	}
	return storage.FeedbackCategorical
}
