package querylang

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// parseLiteralValue converts the decoded value of a $literal. Objects and
// arrays hold nested {"$literal": v} wrappers, as the wire model defines
// them.
func parseLiteralValue(v any, loc string, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errAt(loc, fmt.Sprintf("nests deeper than %d levels", MaxDepth))
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		return parseNumber(x, loc)
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			item, err := parseNestedLiteral(x[k], loc+"."+k, depth)
			if err != nil {
				return nil, err
			}
			out[k] = item
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			var err error
			if out[i], err = parseNestedLiteral(item, fmt.Sprintf("%s[%d]", loc, i), depth); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, errAt(loc, "expects a string, number, boolean, null, object or array")
}

// parseNumber keeps integers (no fraction, no exponent, fitting 64 bits)
// as int64 and reads everything else as float64.
func parseNumber(n json.Number, loc string) (any, error) {
	text := n.String()
	if !strings.ContainsAny(text, ".eE") {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, errAt(loc, fmt.Sprintf("number %s is out of range for a 64-bit float", text))
	}
	return f, nil
}

func parseNestedLiteral(v any, loc string, depth int) (any, error) {
	obj, ok := v.(map[string]any)
	inner, has := obj["$literal"]
	if !ok || len(obj) != 1 || !has {
		return nil, errAt(loc, `expects a nested literal {"$literal": <value>}`)
	}
	return parseLiteralValue(inner, loc+".$literal", depth+1)
}
