package traceapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
)

// V2ObjectsAPI serves the v2 object API: ops, datasets, scorers,
// evaluations and models under /v2/{entity}/{project}/. It keeps nothing
// of its own: every kind is an object version in the objects store
// (source code in the files store, dataset rows in the tables store), so
// /obj/read, /objs/query and refs see what it creates, and it lists what
// the SDKs publish through /obj/create.
type V2ObjectsAPI struct {
	objects  storage.ObjectStore
	tables   storage.TableStore
	files    storage.FileStore
	logger   *slog.Logger
	maxBytes int64
	budget   *readBudget
}

// NewV2ObjectsAPI builds the v2 object endpoints. Objects are created
// through objects (which may be the automations-aware wrapper of the
// store), rows through tables and source files through files. maxBodyBytes
// bounds request bodies and the source code a read returns; reads run
// within the Budget WithQueryLimits sets.
func NewV2ObjectsAPI(objects storage.ObjectStore, tables storage.TableStore, files storage.FileStore,
	maxBodyBytes int64, logger *slog.Logger, opts ...Option) *V2ObjectsAPI {
	return &V2ObjectsAPI{objects: objects, tables: tables, files: files, logger: logger, maxBytes: maxBodyBytes,
		budget: newReadBudget(applyOptions(opts), logger)}
}

// Register adds create, list, read and delete of every kind to mux; wrap
// is applied to every handler.
func (a *V2ObjectsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	for _, k := range v2Kinds {
		base := "/v2/{entity}/{project}/" + k.path
		mux.Handle("POST "+base, wrap(httpapi.JSON(a.logger, a.maxBytes, func(r *http.Request, body []byte) (any, error) {
			return a.create(r, body, k)
		})))
		mux.Handle("GET "+base, wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a.list(w, r, k)
		})))
		mux.Handle("GET "+base+"/{object_id}/versions/{digest}", wrap(httpapi.JSON(a.logger, a.maxBytes,
			a.budget.json(func(r *http.Request, _ []byte) (any, error) { return a.read(r, k) }))))
		mux.Handle("DELETE "+base+"/{object_id}", wrap(httpapi.JSON(a.logger, a.maxBytes,
			func(r *http.Request, _ []byte) (any, error) { return a.delete(r, k) })))
	}
}

// authorize checks the caller's access to the project the path names.
func authorize(r *http.Request, need auth.Access) (projectID string, p auth.Principal, err error) {
	projectID = r.PathValue("entity") + "/" + r.PathValue("project")
	p, err = httpapi.Authorize(r.Context(), projectID, need)
	return projectID, p, err
}

func (a *V2ObjectsAPI) create(r *http.Request, body []byte, k v2Kind) (any, error) {
	projectID, p, err := authorize(r, auth.Write)
	if err != nil {
		return nil, err
	}
	pub := publisher{a: a, projectID: projectID}
	if p.UserID != "" {
		pub.userID = &p.UserID
	}
	return k.create(r.Context(), pub, body)
}

func (a *V2ObjectsAPI) read(r *http.Request, k v2Kind) (any, error) {
	projectID, _, err := authorize(r, auth.Read)
	if err != nil {
		return nil, err
	}
	objectID, digest := r.PathValue("object_id"), r.PathValue("digest")
	res, err := a.objects.ReadObject(r.Context(), storage.ObjReadReq{ProjectID: projectID, ObjectID: objectID, Digest: digest})
	if err != nil {
		return nil, deletedError(err)
	}
	if !k.holds(res.Obj) {
		return nil, k.notFound(objectID, digest)
	}
	return k.view(r.Context(), a.sources(projectID), res.Obj)
}

// delete soft-deletes versions of one object of the kind: the digests the
// query names (each as /obj/delete takes it), or every live version. A
// version of another kind under the same name is not found, so one kind's
// endpoint never removes another's objects.
func (a *V2ObjectsAPI) delete(r *http.Request, k v2Kind) (any, error) {
	projectID, _, err := authorize(r, auth.Write)
	if err != nil {
		return nil, err
	}
	req := storage.ObjDeleteReq{ProjectID: projectID, ObjectID: r.PathValue("object_id"), Digests: r.URL.Query()["digests"]}
	if len(req.Digests) > storage.MaxDeleteDigests {
		return nil, fmt.Errorf("digests names %d versions; delete %d or fewer at a time: %w",
			len(req.Digests), storage.MaxDeleteDigests, storage.ErrInvalidArgument)
	}
	selectors := req.Digests
	if len(selectors) == 0 {
		selectors = []string{"latest"}
	}
	for _, sel := range selectors {
		res, err := a.objects.ReadObject(r.Context(), storage.ObjReadReq{ProjectID: projectID, ObjectID: req.ObjectID,
			Digest: sel, MetadataOnly: true})
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return nil, k.notFound(req.ObjectID, sel)
		case err != nil:
			return nil, err
		case !k.holds(res.Obj):
			return nil, k.notFound(req.ObjectID, sel)
		}
	}
	res, err := a.objects.DeleteObjects(r.Context(), req)
	if err != nil {
		return nil, err
	}
	return map[string]int{"num_deleted": res.NumDeleted}, nil
}

// sources reads source files of projectID for the views.
func (a *V2ObjectsAPI) sources(projectID string) sourceReader {
	return sourceReader{files: a.files, projectID: projectID, max: a.maxBytes}
}
