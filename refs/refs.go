// Package refs parses and prints Weave ref URIs (weave:///entity/project/
// object/name:digest/attr/rows/id/<row>, table, op and call refs), finds
// the refs inside JSON values, and walks a ref's extra path through a JSON
// value.
//
// This package must never import storage or a backend: resolving a ref to
// stored data is the backend's job; this package only says what to fetch.
package refs

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every parse error.
var ErrInvalid = errors.New("invalid ref")

// Scheme is the URI scheme of a ref.
type Scheme string

// Schemes a ref may use. Internal refs never appear on the public wire;
// artifact refs point into W&B and are passed through untouched.
const (
	SchemeWeave    Scheme = "weave"
	SchemeInternal Scheme = "weave-trace-internal"
	SchemeArtifact Scheme = "wandb-artifact"
)

// Kind says what a ref addresses.
type Kind string

// Ref kinds.
const (
	KindObject   Kind = "object"
	KindOp       Kind = "op"
	KindTable    Kind = "table"
	KindCall     Kind = "call"
	KindArtifact Kind = "artifact"
)

// EdgeKind names one step of an extra path.
type EdgeKind string

// Edge kinds: a dict key, an object attribute, a list index (the value is
// an integer) and a table row (the value is a row digest).
const (
	EdgeKey   EdgeKind = "key"
	EdgeAttr  EdgeKind = "attr"
	EdgeIndex EdgeKind = "index"
	EdgeID    EdgeKind = "id"
)

// Edge is one (edge, value) pair of an extra path, value decoded.
type Edge struct {
	Kind  EdgeKind
	Value string
}

// Ref is a parsed ref URI.
type Ref struct {
	Scheme Scheme
	// ProjectID is "entity/project" for weave and artifact refs and the
	// single-segment internal id for internal refs.
	ProjectID string
	Kind      Kind
	Name      string // object and op refs
	Version   string // object and op refs: a digest, or latest, v<N>, an alias
	Digest    string // table refs
	ID        string // call and artifact refs
	Extra     []Edge // object, op and call refs
}

// IsRef reports whether s would be interpreted as a ref: whether it starts
// with the weave or internal scheme. It does not say that s parses.
func IsRef(s string) bool {
	return strings.HasPrefix(s, "weave:///") || strings.HasPrefix(s, "weave-trace-internal:///")
}

// Parse parses a ref URI of any scheme and kind.
func Parse(s string) (Ref, error) {
	r, err := parse(s)
	if err != nil {
		return Ref{}, fmt.Errorf("%w %q: %s", ErrInvalid, s, err.Error())
	}
	return r, nil
}

func parse(s string) (Ref, error) {
	if !utf8.ValidString(s) {
		return Ref{}, errors.New("not valid UTF-8")
	}
	scheme, rest, ok := strings.Cut(s, ":///")
	if !ok {
		return Ref{}, errors.New("want weave:///<entity>/<project>/<kind>/...")
	}
	parts := strings.Split(rest, "/")
	r := Ref{Scheme: Scheme(scheme)}
	switch r.Scheme {
	case SchemeWeave:
		if len(parts) < 4 || parts[0] == "" || parts[1] == "" {
			return Ref{}, errors.New("want weave:///<entity>/<project>/<kind>/<target>")
		}
		r.ProjectID = parts[0] + "/" + parts[1]
		return r, r.parseKind(parts[2], parts[3:])
	case SchemeInternal:
		if len(parts) < 3 || parts[0] == "" {
			return Ref{}, errors.New("want weave-trace-internal:///<project_id>/<kind>/<target>")
		}
		r.ProjectID = parts[0]
		return r, r.parseKind(parts[1], parts[2:])
	case SchemeArtifact:
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return Ref{}, errors.New("want wandb-artifact:///<entity>/<project>/<artifact>")
		}
		r.ProjectID, r.Kind, r.ID = parts[0]+"/"+parts[1], KindArtifact, parts[2]
		return r, nil
	}
	return Ref{}, fmt.Errorf("unknown scheme %q; use weave:///", scheme)
}

func (r *Ref) parseKind(kind string, remaining []string) error {
	r.Kind = Kind(kind)
	target, extra := remaining[0], remaining[1:]
	if target == "" {
		return fmt.Errorf("empty %s target", kind)
	}
	switch r.Kind {
	case KindTable:
		if len(extra) > 0 || strings.Contains(target, ":") {
			return errors.New("a table ref is <kind>/table/<digest> with no ':' and no extra path")
		}
		r.Digest = target
		return nil
	case KindCall:
		r.ID = target
	case KindObject, KindOp:
		name, version, ok := strings.Cut(target, ":")
		if !ok || name == "" || version == "" || strings.Contains(version, ":") {
			return fmt.Errorf("want %s/<name>:<version>, got %q", kind, target)
		}
		r.Name, r.Version = name, version
	default:
		return fmt.Errorf("unknown ref kind %q; use object, op, table or call", kind)
	}
	var err error
	r.Extra, err = parseExtra(extra)
	return err
}

// parseExtra decodes and checks the (edge, value) pairs. A lone empty
// segment is a trailing slash, which the reference parser ignores.
func parseExtra(segments []string) ([]Edge, error) {
	if len(segments) == 0 || (len(segments) == 1 && segments[0] == "") {
		return nil, nil
	}
	if len(segments)%2 != 0 {
		return nil, errors.New("the extra path must be (edge, value) pairs")
	}
	edges := make([]Edge, 0, len(segments)/2)
	for i := 0; i < len(segments); i += 2 {
		e := Edge{Kind: EdgeKind(Unquote(segments[i])), Value: Unquote(segments[i+1])}
		switch e.Kind {
		case EdgeKey, EdgeAttr, EdgeID:
		case EdgeIndex:
			if _, ok := ParseIndex(e.Value); !ok {
				return nil, fmt.Errorf("index edge value %q is not an integer", e.Value)
			}
		default:
			return nil, fmt.Errorf("unknown edge %q; use key, attr, index or id", e.Kind)
		}
		edges = append(edges, e)
	}
	return edges, nil
}

// String prints the ref in its URI form; extra-path segments are
// percent-encoded with nothing considered safe, as the reference does.
func (r Ref) String() string {
	var b strings.Builder
	b.WriteString(string(r.Scheme))
	b.WriteString(":///")
	b.WriteString(r.ProjectID)
	b.WriteByte('/')
	switch r.Kind {
	case KindArtifact:
		b.WriteString(r.ID)
		return b.String()
	case KindTable:
		b.WriteString("table/")
		b.WriteString(r.Digest)
		return b.String()
	case KindCall:
		b.WriteString("call/")
		b.WriteString(r.ID)
	default:
		b.WriteString(string(r.Kind))
		b.WriteByte('/')
		b.WriteString(r.Name)
		b.WriteByte(':')
		b.WriteString(r.Version)
	}
	for _, e := range r.Extra {
		b.WriteByte('/')
		b.WriteString(Quote(string(e.Kind)))
		b.WriteByte('/')
		b.WriteString(Quote(e.Value))
	}
	return b.String()
}
