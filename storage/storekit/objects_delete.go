package storekit

import (
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
)

// CheckDeleteSize refuses a delete request naming too many digests.
func CheckDeleteSize(req storage.ObjDeleteReq) error {
	if len(req.Digests) > storage.MaxDeleteDigests {
		return fmt.Errorf("obj delete names %d digests; delete %d or fewer at a time: %w",
			len(req.Digests), storage.MaxDeleteDigests, storage.ErrInvalidArgument)
	}
	return nil
}

// MatchDeletes picks the live versions the request names (all when it
// names none); every distinct selector must match a version.
func MatchDeletes[V Versioned](req storage.ObjDeleteReq, versions []V) ([]V, error) {
	var doomed []V
	for _, v := range versions {
		m := v.Meta()
		if !m.Deleted && (len(req.Digests) == 0 || slices.ContainsFunc(req.Digests, func(sel string) bool {
			return selectorMatches(sel, m)
		})) {
			doomed = append(doomed, v)
		}
	}
	if len(doomed) == 0 {
		return nil, fmt.Errorf("object %s (%v) not found when deleting: %w", req.ObjectID, req.Digests, storage.ErrNotFound)
	}
	named := DistinctSorted(req.Digests)
	if len(req.Digests) > 0 && len(named) != len(doomed) {
		return nil, fmt.Errorf("delete request contains %d digests, but found %d objects to delete: %w",
			len(named), len(doomed), storage.ErrNotFound)
	}
	return doomed, nil
}

// selectorMatches reports whether a delete selector (digest, latest, v<N>)
// names v.
func selectorMatches(sel string, v VersionMeta) bool {
	if sel == "latest" {
		return v.Latest
	}
	if n, ok := storage.VersionIndex(sel); ok {
		return v.Index == n
	}
	return v.Digest == sel
}

// DeleteResult is the answer to deleting the doomed versions.
func DeleteResult[V Versioned](doomed []V) storage.ObjDeleteRes {
	res := storage.ObjDeleteRes{NumDeleted: len(doomed)}
	for _, v := range doomed {
		m := v.Meta()
		res.DeletedVersions = append(res.DeletedVersions,
			storage.DeletedObjVersion{Digest: m.Digest, BaseObjectClass: m.Base, LeafObjectClass: m.Leaf})
	}
	return res
}

// DigestsOf lists the digests of versions.
func DigestsOf[V Versioned](versions []V) []string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = v.Meta().Digest
	}
	return out
}

// NextLatest is the version that becomes latest once doomed are deleted:
// when the latest is among them, the live survivor created last (ties go
// to the higher index); ok is false when latest stays or no version
// survives.
func NextLatest[V Versioned](versions, doomed []V) (next V, ok bool) {
	if !slices.ContainsFunc(doomed, func(v V) bool { return v.Meta().Latest }) {
		return next, false
	}
	gone := DigestsOf(doomed)
	var newest *VersionMeta
	for i, v := range versions {
		m := v.Meta()
		if m.Deleted || slices.Contains(gone, m.Digest) {
			continue
		}
		if newest == nil || m.Created.After(newest.Created) || m.Created.Equal(newest.Created) && m.Index > newest.Index {
			newest, next, ok = &m, versions[i], true
		}
	}
	return next, ok
}
