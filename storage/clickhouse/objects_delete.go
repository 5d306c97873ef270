package clickhouse

import (
	"context"
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
)

// DeleteObjects implements storage.ObjectStore. Labels of the doomed
// versions go first, then one INSERT marks the versions deleted and moves
// latest, so a failure half way leaves live versions a retry deletes.
func (s *Store) DeleteObjects(ctx context.Context, req storage.ObjDeleteReq) (storage.ObjDeleteRes, error) {
	if len(req.Digests) > storage.MaxDeleteDigests {
		return storage.ObjDeleteRes{}, fmt.Errorf("obj delete names %d digests; delete %d or fewer at a time: %w",
			len(req.Digests), storage.MaxDeleteDigests, storage.ErrInvalidArgument)
	}
	unlock := s.projects.lock([]string{req.ProjectID})
	defer unlock()
	versions, err := s.objectVersions(ctx, req.ProjectID, req.ObjectID)
	if err != nil {
		return storage.ObjDeleteRes{}, err
	}
	doomed, err := matchDeletes(req, versions)
	if err != nil {
		return storage.ObjDeleteRes{}, err
	}
	res := storage.ObjDeleteRes{NumDeleted: len(doomed)}
	digests := make([]string, len(doomed))
	for i, v := range doomed {
		digests[i] = v.digest
		res.DeletedVersions = append(res.DeletedVersions,
			storage.DeletedObjVersion{Digest: v.digest, BaseObjectClass: v.base, LeafObjectClass: v.leaf})
	}
	if err := s.dropLabels(ctx, req.ProjectID, req.ObjectID, digests); err != nil {
		return storage.ObjDeleteRes{}, err
	}
	return res, s.softDelete(ctx, versions, doomed)
}

// matchDeletes picks the live versions the request names (all when it
// names none); every distinct selector must match a version.
func matchDeletes(req storage.ObjDeleteReq, versions []objRow) ([]objRow, error) {
	var doomed []objRow
	for _, v := range versions {
		if v.deleted == nil && (len(req.Digests) == 0 || slices.ContainsFunc(req.Digests, func(sel string) bool {
			return selectorMatches(sel, v)
		})) {
			doomed = append(doomed, v)
		}
	}
	if len(doomed) == 0 {
		return nil, fmt.Errorf("object %s (%v) not found when deleting: %w", req.ObjectID, req.Digests, storage.ErrNotFound)
	}
	named := distinctSorted(req.Digests)
	if len(req.Digests) > 0 && len(named) != len(doomed) {
		return nil, fmt.Errorf("delete request contains %d digests, but found %d objects to delete: %w",
			len(named), len(doomed), storage.ErrNotFound)
	}
	return doomed, nil
}

// selectorMatches reports whether a delete selector (digest, latest, v<N>)
// names v.
func selectorMatches(sel string, v objRow) bool {
	if sel == "latest" {
		return v.latest
	}
	if n, ok := storage.VersionIndex(sel); ok {
		return v.index == n
	}
	return v.digest == sel
}

// softDelete writes the doomed versions again with deleted_at set and
// their value dropped (no read returns a deleted value), together with
// the newest survivor as latest when latest went.
func (s *Store) softDelete(ctx context.Context, versions, doomed []objRow) error {
	now := s.writeTime()
	out := make([]objRow, len(doomed))
	latestGone := false
	for i, v := range doomed {
		latestGone = latestGone || v.latest
		v.version, v.latest, v.deleted, v.val = s.versions.next(v.version), false, &now, ""
		out[i] = v
	}
	if latestGone {
		if newest := newestSurvivor(versions, doomed); newest != nil {
			rows, err := s.rewriteObjRows(ctx, newest.project, newest.objectID, map[string]bool{newest.digest: true})
			if err != nil {
				return err
			}
			out = append(out, rows...)
		}
	}
	return s.insertObjRows(ctx, out)
}

// newestSurvivor is the live version, not doomed, created last.
func newestSurvivor(versions, doomed []objRow) *objRow {
	var newest *objRow
	for i, v := range versions {
		gone := slices.ContainsFunc(doomed, func(d objRow) bool { return d.digest == v.digest })
		if v.deleted != nil || gone {
			continue
		}
		if newest == nil || v.created.After(newest.created) || v.created.Equal(newest.created) && v.index > newest.index {
			newest = &versions[i]
		}
	}
	return newest
}
