package querylang

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// literalValue converts the decoded value of a $literal. Objects and
// arrays hold nested {"$literal": v} wrappers, as the wire model defines
// them.
func (p *parser) literalValue(v any, loc string, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errAt(loc, fmt.Sprintf("nests deeper than %d levels", MaxDepth))
	}
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if len(x) > p.lim.MaxStringBytes {
			return nil, overLimit(loc, len(x), "bytes", p.lim.MaxStringBytes, keyStringBytes)
		}
		return x, nil
	case json.Number:
		return parseNumber(x, loc)
	case map[string]any:
		if err := p.nodesOf(len(x)); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			if len(k) > p.lim.MaxStringBytes {
				return nil, overLimit(loc, len(k), "bytes in a key", p.lim.MaxStringBytes, keyStringBytes)
			}
			item, err := p.nestedLiteral(x[k], loc+"."+k, depth)
			if err != nil {
				return nil, err
			}
			out[k] = item
		}
		return out, nil
	case []any:
		if err := p.nodesOf(len(x)); err != nil {
			return nil, err
		}
		out := make([]any, len(x))
		for i, item := range x {
			var err error
			if out[i], err = p.nestedLiteral(item, fmt.Sprintf("%s[%d]", loc, i), depth); err != nil {
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

func (p *parser) nestedLiteral(v any, loc string, depth int) (any, error) {
	obj, ok := v.(map[string]any)
	inner, has := obj["$literal"]
	if !ok || len(obj) != 1 || !has {
		return nil, errAt(loc, `expects a nested literal {"$literal": <value>}`)
	}
	return p.literalValue(inner, loc+".$literal", depth+1)
}

// nodesOf counts the n elements of an array or object literal as nodes,
// before any is converted.
func (p *parser) nodesOf(n int) error {
	if n > p.lim.MaxNodes-p.nodes {
		return overLimit(p.root, 0, nodesUnit, p.lim.MaxNodes, keyNodes)
	}
	p.nodes += n
	return nil
}
