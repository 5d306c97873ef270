package storekit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

// PreparedObject is an object version ready to store.
type PreparedObject struct {
	digest.ObjectResult
	Dump string // the stored text
}

// PrepareObject checks o and computes its digest, classes and stored text;
// a client digest that differs is ErrConflict.
func PrepareObject(o storage.ObjSchemaForInsert) (PreparedObject, error) {
	if o.ProjectID == "" {
		return PreparedObject{}, fmt.Errorf("obj.project_id is required: %w", storage.ErrInvalidArgument)
	}
	if err := storage.ValidateObjectID(o.ObjectID); err != nil {
		return PreparedObject{}, err
	}
	if len(o.Val) == 0 {
		return PreparedObject{}, fmt.Errorf("obj.val is required (any JSON value): %w", storage.ErrInvalidArgument)
	}
	builtin := o.BuiltinObjectClass
	if builtin == nil {
		builtin = o.SetBaseObjectClass
	}
	res, err := digest.Object(o.Val, derefStr(builtin))
	if err != nil {
		return PreparedObject{}, fmt.Errorf("obj.val: %w: %w", storage.ErrInvalidArgument, err)
	}
	if err := storage.CheckExpectedDigest("obj "+o.ObjectID, o.ExpectedDigest, res.Digest); err != nil {
		return PreparedObject{}, err
	}
	// The digest is over sorted keys; the value is kept in the order it
	// was sent, as the reference keeps json.dumps(val).
	kept, err := digest.Dumps(res.Val, digest.Options{})
	if err != nil {
		return PreparedObject{}, fmt.Errorf("obj.val: %w: %w", storage.ErrInvalidArgument, err)
	}
	p := PreparedObject{ObjectResult: res, Dump: string(kept.Text)}
	if !kept.Finite {
		// Python's text holds Infinity, which no JSON reader accepts back.
		p.Dump = string(res.Val)
	}
	return p, nil
}

// VersionMeta is what the create and delete rules read of a stored object
// version.
type VersionMeta struct {
	Digest, Kind string
	Base, Leaf   *string
	Index        int64
	Created      time.Time
	Latest       bool
	Deleted      bool
}

// Meta returns v itself, so a backend that keeps no other version data
// can pass VersionMeta values to the rules.
func (v VersionMeta) Meta() VersionMeta { return v }

// Versioned is a backend's stored object version.
type Versioned interface {
	Meta() VersionMeta
}

// CreatePlan is what creating an object version writes.
type CreatePlan struct {
	// Existing is the position among the versions of the stored version
	// with the new digest, or -1.
	Existing int
	// Live is set when that version is live: it only becomes latest
	// again, and nothing else is written.
	Live bool
	// Index is the version_index of a new or revived version: every
	// stored version counts, deleted ones too.
	Index int64
}

// PlanCreate applies the reference's create rules to p and the stored
// versions of its object: a live digest only becomes latest again;
// otherwise the version gets the next index, reviving a deleted version
// of the same digest, unless its type collides with a live version.
func PlanCreate[V Versioned](objectID string, versions []V, p PreparedObject) (CreatePlan, error) {
	existing := slices.IndexFunc(versions, func(v V) bool { return v.Meta().Digest == p.Digest })
	if existing >= 0 && !versions[existing].Meta().Deleted {
		return CreatePlan{Existing: existing, Live: true}, nil
	}
	if err := checkTypeCollision(objectID, versions, p); err != nil {
		return CreatePlan{}, err
	}
	return CreatePlan{Existing: existing, Index: int64(len(versions))}, nil
}

// checkTypeCollision refuses a new version whose base class differs from
// the live versions of the same kind: refs carry no type, so one name
// must keep one type.
func checkTypeCollision[V Versioned](objectID string, versions []V, p PreparedObject) error {
	describe := func(c *string) string {
		if c == nil {
			return "a generic (untyped) object"
		}
		return "a " + *c
	}
	for _, v := range versions {
		m := v.Meta()
		if m.Deleted || m.Kind != p.Kind || sameClass(m.Base, p.BaseObjectClass) {
			continue
		}
		return fmt.Errorf("cannot publish %q as %s: that name is already used by %s in this project; publish this object under a different name: %w",
			objectID, describe(p.BaseObjectClass), describe(m.Base), storage.ErrInvalidArgument)
	}
	return nil
}

func sameClass(a, b *string) bool {
	return (a == nil) == (b == nil) && derefStr(a) == derefStr(b)
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ObjectOrderBy is the ORDER BY clause of an object query: object_id and
// created_at terms only, then version_index ascending, as the reference
// does. Both columns have these names in every backend's schema.
func ObjectOrderBy(sortBy []storage.SortBy) string {
	var terms []string
	for _, sb := range sortBy {
		dir := strings.ToLower(sb.Direction)
		if (sb.Field == "object_id" || sb.Field == "created_at") && (dir == "asc" || dir == "desc") {
			terms = append(terms, sb.Field+" "+dir)
		}
	}
	if len(terms) == 0 {
		terms = []string{"created_at asc"}
	}
	return " ORDER BY " + strings.Join(append(terms, "version_index asc"), ", ")
}

// DistinctSorted returns the values sorted without repeats: bulk inserts
// must not name one key twice, and list parameters stay deterministic.
func DistinctSorted(vals []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(vals)))
}
