package querylang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// MaxDepth bounds operator nesting so a hostile query cannot exhaust the
// stack of the parser or of the database's SQL parser.
const MaxDepth = 64

// rootLoc names the document in error locations, as the request field.
const rootLoc = "query"

// Parse parses a Query document {"$expr": <Operation>}. A nil, empty or
// JSON null document means "no query" and yields a nil Expr and nil error.
// Errors are *Error values wrapping storage.ErrInvalidArgument. It bounds
// nesting (MaxDepth) but not breadth: a document from a client goes
// through Limits.Parse.
func Parse(raw json.RawMessage) (Expr, error) { return parseDoc(raw, unlimited()) }

// parseDoc parses a Query document within lim.
func parseDoc(raw json.RawMessage, lim Limits) (Expr, error) {
	doc, err := decode(raw, rootLoc)
	if err != nil || doc == nil {
		return nil, err
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errAt(rootLoc, `expects an object {"$expr": <operation>}`)
	}
	if err := onlyKeys(obj, rootLoc, "$expr"); err != nil {
		return nil, err
	}
	body, ok := obj["$expr"]
	if !ok {
		return nil, errAt(rootLoc, `expects an object {"$expr": <operation>}`)
	}
	loc := rootLoc + ".$expr"
	p := &parser{lim: lim, root: rootLoc}
	e, err := p.operand(body, loc, 0)
	if err != nil {
		return nil, err
	}
	if !IsOperation(e) {
		return nil, errAt(loc, "must be an operation such as $and, $eq or $contains, not a bare $literal, $getField or $convert")
	}
	return e, nil
}

// ParseOperand parses a single operand (an operation, $literal, $getField
// or $convert) for surfaces that embed operands outside a Query document;
// loc names it in errors.
func ParseOperand(raw json.RawMessage, loc string) (Expr, error) {
	doc, err := decode(raw, loc)
	if err != nil {
		return nil, err
	}
	p := &parser{lim: unlimited(), root: loc}
	return p.operand(doc, loc, 0)
}

// parser parses one decoded document within its limits, counting the
// nodes it makes; root names the document in the node-count error.
type parser struct {
	lim   Limits
	root  string
	nodes int
}

// node counts one more node of the document.
func (p *parser) node() error {
	if p.nodes++; p.nodes > p.lim.MaxNodes {
		return overLimit(p.root, 0, nodesUnit, p.lim.MaxNodes, keyNodes)
	}
	return nil
}

// decode reads one JSON value in a single pass, keeping number text so
// integers and floats stay apart. Empty input and null decode to nil.
func decode(raw json.RawMessage, loc string) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errAt(loc, "expects a valid JSON document: "+err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errAt(loc, "expects a single JSON document, found trailing data")
	}
	return v, nil
}

func (p *parser) operand(v any, loc string, depth int) (Expr, error) {
	if depth > MaxDepth {
		return nil, errAt(loc, fmt.Sprintf("nests deeper than %d levels; flatten the expression", MaxDepth))
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errAt(loc, "expects a JSON object such as {\"$getField\": ...}, {\"$literal\": ...} or an operation")
	}
	if len(obj) != 1 {
		return nil, errAt(loc, fmt.Sprintf("expects an object with exactly one operator key, got %d keys (%s)",
			len(obj), strings.Join(sortedKeys(obj), ", ")))
	}
	if err := p.node(); err != nil {
		return nil, err
	}
	key := sortedKeys(obj)[0]
	return p.keyed(key, obj[key], loc+"."+key, depth)
}

func (p *parser) keyed(key string, val any, loc string, depth int) (Expr, error) {
	switch key {
	case "$literal":
		v, err := p.literalValue(val, loc, depth)
		if err != nil {
			return nil, err
		}
		return &Literal{Value: v}, nil
	case "$getField":
		path, ok := val.(string)
		if !ok {
			return nil, errAt(loc, `expects a string field path such as "inputs.model"`)
		}
		if err := p.lim.checkPath(path, loc); err != nil {
			return nil, err
		}
		return &GetField{Path: path}, nil
	case "$convert":
		return p.convert(val, loc, depth)
	case "$and", "$or":
		return p.logical(key, val, loc, depth)
	case "$not":
		ops, err := p.operandArray(val, loc, depth, 1)
		if err != nil {
			return nil, err
		}
		return &Not{Operand: ops[0]}, nil
	case string(OpEq), string(OpGt), string(OpGte), string(OpLt), string(OpLte):
		ops, err := p.operandArray(val, loc, depth, 2)
		if err != nil {
			return nil, err
		}
		return &Compare{Op: CompareOp(key), Left: ops[0], Right: ops[1]}, nil
	case "$in":
		return p.in(val, loc, depth)
	case "$contains", "$containsToken":
		return p.contains(key, val, loc, depth)
	}
	return nil, errAt(loc, "unknown operator; use one of $and $or $not $eq $gt $gte $lt $lte $in "+
		"$contains $containsToken $getField $literal $convert")
}

func (p *parser) logical(key string, val any, loc string, depth int) (Expr, error) {
	if items, ok := val.([]any); ok && len(items) > p.lim.MaxOperands {
		return nil, overLimit(loc, len(items), "operands", p.lim.MaxOperands, keyOperands)
	}
	ops, err := p.operandArray(val, loc, depth, -1)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, errAt(loc, "expects a non-empty array of operands")
	}
	if key == "$and" {
		return &And{Operands: ops}, nil
	}
	return &Or{Operands: ops}, nil
}

// operandArray parses a JSON array of operands; want < 0 accepts any
// length, otherwise exactly want.
func (p *parser) operandArray(val any, loc string, depth, want int) ([]Expr, error) {
	items, ok := val.([]any)
	if !ok || (want >= 0 && len(items) != want) {
		if want >= 0 {
			return nil, errAt(loc, arityMsg(want))
		}
		return nil, errAt(loc, "expects a JSON array")
	}
	ops := make([]Expr, len(items))
	for i, item := range items {
		var err error
		if ops[i], err = p.operand(item, fmt.Sprintf("%s[%d]", loc, i), depth+1); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

func arityMsg(n int) string {
	if n == 1 {
		return "expects an array of exactly 1 operand"
	}
	return fmt.Sprintf("expects an array of exactly %d operands", n)
}

func (p *parser) in(val any, loc string, depth int) (Expr, error) {
	items, ok := val.([]any)
	if !ok || len(items) != 2 {
		return nil, errAt(loc, "expects an array of exactly 2 items: an operand and an array of operands")
	}
	left, err := p.operand(items[0], loc+"[0]", depth+1)
	if err != nil {
		return nil, err
	}
	elems, ok := items[1].([]any)
	if !ok {
		return nil, errAt(loc+"[1]", "expects an array of operands")
	}
	if len(elems) > p.lim.MaxInList {
		return nil, overLimit(loc+"[1]", len(elems), "elements", p.lim.MaxInList, keyInList)
	}
	list, err := p.operandArray(elems, loc+"[1]", depth, -1)
	if err != nil {
		return nil, err
	}
	return &In{Operand: left, List: list}, nil
}

func (p *parser) convert(val any, loc string, depth int) (Expr, error) {
	obj, err := specObject(val, loc, []string{"input", "to"}, nil)
	if err != nil {
		return nil, err
	}
	input, err := p.operand(obj["input"], loc+".input", depth+1)
	if err != nil {
		return nil, err
	}
	to, _ := obj["to"].(string)
	switch c := CastType(to); c {
	case CastDouble, CastString, CastInt, CastBool, CastExists:
		return &Convert{Input: input, To: c}, nil
	}
	return nil, errAt(loc+".to", `expects one of "double", "string", "int", "bool", "exists"`)
}

func (p *parser) contains(key string, val any, loc string, depth int) (Expr, error) {
	obj, err := specObject(val, loc, []string{"input", "substr"}, []string{"case_insensitive"})
	if err != nil {
		return nil, err
	}
	input, err := p.operand(obj["input"], loc+".input", depth+1)
	if err != nil {
		return nil, err
	}
	substr, err := p.operand(obj["substr"], loc+".substr", depth+1)
	if err != nil {
		return nil, err
	}
	ci, isBool := obj["case_insensitive"].(bool)
	if raw := obj["case_insensitive"]; raw != nil && !isBool {
		return nil, errAt(loc+".case_insensitive", "expects true, false or null")
	}
	if key == "$contains" {
		return &Contains{Input: input, Substr: substr, CaseInsensitive: ci}, nil
	}
	return &ContainsToken{Input: input, Substr: substr, CaseInsensitive: ci}, nil
}

// specObject checks the argument object of $convert and $contains: every
// required key present, no key outside required and optional.
func specObject(val any, loc string, required, optional []string) (map[string]any, error) {
	obj, ok := val.(map[string]any)
	if !ok {
		return nil, errAt(loc, "expects a JSON object with keys "+strings.Join(required, ", "))
	}
	for _, k := range required {
		if _, ok := obj[k]; !ok {
			return nil, errAt(loc, fmt.Sprintf("missing required key %q", k))
		}
	}
	return obj, onlyKeys(obj, loc, append(slices.Clone(required), optional...)...)
}

func onlyKeys(obj map[string]any, loc string, allowed ...string) error {
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(allowed, k) {
			return errAt(loc, fmt.Sprintf("unknown key %q; allowed keys: %s", k, strings.Join(allowed, ", ")))
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
