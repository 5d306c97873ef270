package storekit

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/storage"
)

// ObjectReader is what the shared object reads need from a backend: the
// SQL differs per engine, the rules around it do not.
type ObjectReader interface {
	// VersionNamed returns the version a selector names (latest, v<N>, a
	// content digest, or an alias name, which when no alias is tried as a
	// digest), deleted or not; with metadataOnly its Val is {}. ok is
	// false when there is none.
	VersionNamed(ctx context.Context, projectID, objectID, selector string, metadataOnly bool) (obj storage.ObjSchema, ok bool, err error)
	// LiveVersions lists the live versions req's filter matches, ordered
	// by ObjectOrderBy(req.SortBy), after offset and at most limit of them
	// (limit -1: no limit). SizeBytes may be set on each.
	LiveVersions(ctx context.Context, req storage.ObjQueryReq, limit, offset int64) ([]storage.ObjSchema, error)
	// AttachLabels fills Tags and Aliases of objs (see ApplyLabels).
	AttachLabels(ctx context.Context, projectID string, objs []storage.ObjSchema) error
}

// ReadObject answers storage.ObjectStore.ReadObject: ErrNotFound when the
// selector names nothing, *storage.ObjectDeletedError when it names a
// deleted version.
func ReadObject(ctx context.Context, r ObjectReader, req storage.ObjReadReq) (storage.ObjReadRes, error) {
	o, ok, err := r.VersionNamed(ctx, req.ProjectID, req.ObjectID, req.Digest, req.MetadataOnly)
	if err != nil {
		return storage.ObjReadRes{}, err
	}
	if !ok {
		return storage.ObjReadRes{}, fmt.Errorf("Obj %s:%s not found: %w", req.ObjectID, req.Digest, storage.ErrNotFound)
	}
	if o.DeletedAt != nil {
		return storage.ObjReadRes{}, &storage.ObjectDeletedError{ObjectID: o.ObjectID, VersionIndex: o.VersionIndex, DeletedAt: *o.DeletedAt}
	}
	o.SizeBytes = nil
	objs := []storage.ObjSchema{o}
	if req.IncludeTagsAndAliases {
		if err := r.AttachLabels(ctx, req.ProjectID, objs); err != nil {
			return storage.ObjReadRes{}, err
		}
	}
	return storage.ObjReadRes{Obj: objs[0]}, nil
}

// QueryObjects answers storage.ObjectStore.QueryObjects: sizes only when
// asked for, labels only when asked for.
func QueryObjects(ctx context.Context, r ObjectReader, req storage.ObjQueryReq) (storage.ObjQueryRes, error) {
	limit, offset, err := storage.PageBounds(req.Limit, req.Offset)
	if err != nil {
		return storage.ObjQueryRes{}, err
	}
	objs, err := r.LiveVersions(ctx, req, limit, offset)
	if err != nil {
		return storage.ObjQueryRes{}, err
	}
	if objs == nil {
		objs = []storage.ObjSchema{}
	}
	for i := range objs {
		if !req.IncludeStorageSize {
			objs[i].SizeBytes = nil
		}
	}
	if req.IncludeTagsAndAliases {
		if err := r.AttachLabels(ctx, req.ProjectID, objs); err != nil {
			return storage.ObjQueryRes{}, err
		}
	}
	return storage.ObjQueryRes{Objs: objs}, nil
}
