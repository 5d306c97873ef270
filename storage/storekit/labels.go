package storekit

import (
	"slices"

	"github.com/weftdev/weft/storage"
)

// LabelKey addresses the tags or aliases of one object version.
type LabelKey struct {
	ObjectID, Digest string
}

// ValidateLabels checks every tag or alias name with validate (e.g.
// storage.ValidateTagName) before anything is written.
func ValidateLabels(names []string, validate func(string) error) error {
	for _, n := range names {
		if err := validate(n); err != nil {
			return err
		}
	}
	return nil
}

// ObjectIDs lists the distinct object ids of objs, sorted.
func ObjectIDs(objs []storage.ObjSchema) []string {
	ids := make([]string, len(objs))
	for i, o := range objs {
		ids[i] = o.ObjectID
	}
	return DistinctSorted(ids)
}

// ApplyLabels fills Tags and Aliases of objs from the names stored per
// version, each list sorted by code point as Python sorts; "latest" leads
// the aliases of the latest version.
func ApplyLabels(objs []storage.ObjSchema, tags, aliases map[LabelKey][]string) {
	for i := range objs {
		key := LabelKey{ObjectID: objs[i].ObjectID, Digest: objs[i].Digest}
		objs[i].Tags = sortedCopy(tags[key])
		objs[i].Aliases = []string{}
		if objs[i].IsLatest == 1 {
			objs[i].Aliases = append(objs[i].Aliases, "latest")
		}
		objs[i].Aliases = append(objs[i].Aliases, sortedCopy(aliases[key])...)
	}
}

func sortedCopy(names []string) []string {
	out := append([]string{}, names...)
	slices.Sort(out)
	return out
}
