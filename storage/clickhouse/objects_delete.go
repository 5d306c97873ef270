package clickhouse

import (
	"context"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// DeleteObjects implements storage.ObjectStore. Labels of the doomed
// versions go first, then one INSERT marks the versions deleted and moves
// latest, so a failure half way leaves live versions a retry deletes.
func (s *Store) DeleteObjects(ctx context.Context, req storage.ObjDeleteReq) (storage.ObjDeleteRes, error) {
	if err := storekit.CheckDeleteSize(req); err != nil {
		return storage.ObjDeleteRes{}, err
	}
	unlock := s.projects.lock([]string{req.ProjectID})
	defer unlock()
	versions, err := s.objectVersions(ctx, req.ProjectID, req.ObjectID)
	if err != nil {
		return storage.ObjDeleteRes{}, err
	}
	doomed, err := storekit.MatchDeletes(req, versions)
	if err != nil {
		return storage.ObjDeleteRes{}, err
	}
	if err := s.dropLabels(ctx, req.ProjectID, req.ObjectID, storekit.DigestsOf(doomed)); err != nil {
		return storage.ObjDeleteRes{}, err
	}
	return storekit.DeleteResult(doomed), s.softDelete(ctx, versions, doomed)
}

// softDelete writes the doomed versions again with deleted_at set
// (storekit.DeleteStamp) and their value dropped (no read returns a
// deleted value), together with the newest survivor as latest when latest
// went.
func (s *Store) softDelete(ctx context.Context, versions, doomed []objRow) error {
	now := storekit.DeleteStamp(time.Time{}, s.opts.Now)
	out := make([]objRow, len(doomed))
	for i, v := range doomed {
		v.version, v.latest, v.deleted, v.val = s.versions.next(v.version), false, &now, ""
		out[i] = v
	}
	if next, ok := storekit.NextLatest(versions, doomed); ok {
		rows, err := s.rewriteObjRows(ctx, next.project, next.objectID, map[string]bool{next.digest: true})
		if err != nil {
			return err
		}
		out = append(out, rows...)
	}
	return s.insertObjRows(ctx, out)
}
