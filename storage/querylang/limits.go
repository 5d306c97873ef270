package querylang

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/weftdev/weft/storage/errkind"
)

// SettingsKey is the configuration section Limits are read from; a
// LimitError names the setting that raises the limit under it, such as
// "queries.max_operands".
const SettingsKey = "queries"

// Defaults of Limits. Weave's UI sends a handful of terms and one sort
// key, and its SDKs pass id lists through the structured filter (itself
// capped at 1,000 per list); the defaults sit far above both. They bound
// a query's cost to what the store answers in well under a second on a
// sizeable project, where the unbounded shapes they refuse (thousands of
// $and terms, $in lists of 100,000 literals, hundreds of sort keys on
// JSON paths) took from seconds to minutes and hundreds of megabytes.
const (
	DefaultMaxQueryBytes   = 256 << 10
	DefaultMaxOperands     = 100
	DefaultMaxInList       = 1000
	DefaultMaxNodes        = 2000
	DefaultMaxStringBytes  = 64 << 10
	DefaultMaxPathSegments = 64
	DefaultMaxSortKeys     = 10
)

// Limits bound the breadth and size of what a client may ask a store to
// run: the query document ({"$expr": ...}) and the sort keys beside it.
// Nesting is bounded separately by MaxDepth. A zero field takes its
// default. Checking a query against them costs microseconds to a few
// milliseconds, and is done before the query reaches a store.
type Limits struct {
	// MaxQueryBytes is the largest query document, in bytes of JSON as
	// sent (whitespace included), checked before it is decoded. 256 KiB:
	// a document at every other limit ($in lists of 1,000 refs, 2,000
	// nodes) is about half that.
	MaxQueryBytes int `yaml:"max_query_bytes"`
	// MaxOperands is the most operands of one $and or $or. 100.
	MaxOperands int `yaml:"max_operands"`
	// MaxInList is the most elements of one $in list. 1,000.
	MaxInList int `yaml:"max_in_list"`
	// MaxNodes is the most nodes of a whole query: operations, fields,
	// literals (each element of an array or object literal counts) and
	// conversions. 2,000.
	MaxNodes int `yaml:"max_nodes"`
	// MaxStringBytes is the longest string in a query: a literal, a key
	// of an object literal, a $getField path or a sort_by field. 64 KiB.
	MaxStringBytes int `yaml:"max_string_bytes"`
	// MaxPathSegments is the most dot-separated segments of a $getField
	// path or a sort_by field ("inputs.a.b" has three). 64.
	MaxPathSegments int `yaml:"max_path_segments"`
	// MaxSortKeys is the most sort_by terms of one request. 10.
	MaxSortKeys int `yaml:"max_sort_keys"`
}

// DefaultLimits returns Limits with every default set.
func DefaultLimits() Limits {
	return Limits{
		MaxQueryBytes:   DefaultMaxQueryBytes,
		MaxOperands:     DefaultMaxOperands,
		MaxInList:       DefaultMaxInList,
		MaxNodes:        DefaultMaxNodes,
		MaxStringBytes:  DefaultMaxStringBytes,
		MaxPathSegments: DefaultMaxPathSegments,
		MaxSortKeys:     DefaultMaxSortKeys,
	}
}

// limitField is one limit with its setting name (the YAML key under
// SettingsKey).
type limitField struct {
	key string
	v   *int
	def int
}

func (l *Limits) fields() []limitField {
	return []limitField{
		{keyQueryBytes, &l.MaxQueryBytes, DefaultMaxQueryBytes},
		{keyOperands, &l.MaxOperands, DefaultMaxOperands},
		{keyInList, &l.MaxInList, DefaultMaxInList},
		{keyNodes, &l.MaxNodes, DefaultMaxNodes},
		{keyStringBytes, &l.MaxStringBytes, DefaultMaxStringBytes},
		{keyPathSegments, &l.MaxPathSegments, DefaultMaxPathSegments},
		{keySortKeys, &l.MaxSortKeys, DefaultMaxSortKeys},
	}
}

// Validate rejects negative limits, naming each by its setting
// ("queries.max_operands"); zero means "use the default".
func (l Limits) Validate() error {
	var errs []error
	for _, f := range l.fields() {
		if *f.v < 0 {
			errs = append(errs, fmt.Errorf("%s.%s: %d must not be negative (0 takes the default, %d)", SettingsKey, f.key, *f.v, f.def))
		}
	}
	return errors.Join(errs...)
}

// withDefaults fills zero (and, defensively, negative) fields.
func (l Limits) withDefaults() Limits {
	for _, f := range l.fields() {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return l
}

// unlimited bounds nothing but nesting: Parse for documents that were
// checked already, or that come from the server itself.
func unlimited() Limits {
	return Limits{MaxQueryBytes: math.MaxInt, MaxOperands: math.MaxInt, MaxInList: math.MaxInt,
		MaxNodes: math.MaxInt, MaxStringBytes: math.MaxInt, MaxPathSegments: math.MaxInt, MaxSortKeys: math.MaxInt}
}

// The YAML keys of the limits under SettingsKey; a test keeps them equal
// to the struct tags.
const (
	keyQueryBytes   = "max_query_bytes"
	keyOperands     = "max_operands"
	keyInList       = "max_in_list"
	keyNodes        = "max_nodes"
	keyStringBytes  = "max_string_bytes"
	keyPathSegments = "max_path_segments"
	keySortKeys     = "max_sort_keys"
)

// nodesUnit is what MaxNodes counts, as LimitError says it.
const nodesUnit = "nodes (operations, fields and literals)"

// LimitError is a request over one of Limits. It wraps
// storage.ErrInvalidArgument: the answer is a 400, never a query run.
type LimitError struct {
	// Loc is the request field over the limit, such as "query.$expr.$and"
	// or "sort_by".
	Loc string
	// Count is how many the request holds (units of Unit); 0 when
	// counting stopped at the limit.
	Count int
	// Unit names what is counted: "operands", "bytes", ...
	Unit string
	// Max is the limit and Setting the configuration key that raises it.
	Max     int
	Setting string
}

func (e *LimitError) Error() string {
	has := fmt.Sprintf("more than %d", e.Max)
	if e.Count > 0 {
		has = fmt.Sprint(e.Count)
	}
	return fmt.Sprintf("%s has %s %s; at most %d are allowed (%s)", e.Loc, has, e.Unit, e.Max, e.Setting)
}

// Unwrap lets errors.Is(err, storage.ErrInvalidArgument) hold.
func (e *LimitError) Unwrap() error { return errkind.InvalidArgument }

// overLimit is the error of loc holding count units over max, the limit
// set by key.
func overLimit(loc string, count int, unit string, max int, key string) error {
	return &LimitError{Loc: loc, Count: count, Unit: unit, Max: max, Setting: SettingsKey + "." + key}
}

// Parse parses a Query document as the package's Parse does, refusing
// one over l (zero fields take their defaults) with a *LimitError. The
// document's size is checked before it is decoded, and every other limit
// while it is parsed, before the parts over it are.
func (l Limits) Parse(raw json.RawMessage) (Expr, error) {
	l = l.withDefaults()
	if len(raw) > l.MaxQueryBytes {
		return nil, overLimit(rootLoc, len(raw), "bytes", l.MaxQueryBytes, keyQueryBytes)
	}
	// Every node is one JSON object, and at most one more belongs to it
	// (the argument object of $contains or $convert, an object literal),
	// besides the document's own: counting objects refuses a wide query
	// at a fraction of what decoding it would cost.
	if l.MaxNodes < math.MaxInt/2 && countObjects(raw, 2*l.MaxNodes+1) > 2*l.MaxNodes+1 {
		return nil, overLimit(rootLoc, 0, nodesUnit, l.MaxNodes, keyNodes)
	}
	return parseDoc(raw, l)
}

// countObjects counts the objects of a JSON document, up to one past max,
// skipping strings; it does not check the document is valid.
func countObjects(raw []byte, max int) int {
	n := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case '{':
			if n++; n > max {
				return n
			}
		}
	}
	return n
}

// CheckSort checks the sort_by fields of a request: how many, and each
// one's length and path segments.
func (l Limits) CheckSort(fields []string) error {
	l = l.withDefaults()
	if len(fields) > l.MaxSortKeys {
		return overLimit("sort_by", len(fields), "keys", l.MaxSortKeys, keySortKeys)
	}
	for i, f := range fields {
		if err := l.checkPath(f, fmt.Sprintf("sort_by[%d].field", i)); err != nil {
			return err
		}
	}
	return nil
}

// checkPath bounds a field path's bytes and segments.
func (l Limits) checkPath(path, loc string) error {
	if len(path) > l.MaxStringBytes {
		return overLimit(loc, len(path), "bytes", l.MaxStringBytes, keyStringBytes)
	}
	if n := pathSegments(path); n > l.MaxPathSegments {
		return overLimit(loc, n, "path segments", l.MaxPathSegments, keyPathSegments)
	}
	return nil
}

// pathSegments counts SplitPath's segments without building them.
func pathSegments(path string) int {
	n := 1
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '\\':
			if i+1 < len(path) && path[i+1] == '.' {
				i++
			}
		case '.':
			n++
		}
	}
	return n
}
