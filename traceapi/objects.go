package traceapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// ObjectsAPI serves versioned objects, their tags and aliases, and ref
// reads. Every handler authorises the project before the store is called.
type ObjectsAPI struct {
	store    storage.ObjectStore
	logger   *slog.Logger
	maxBytes int64
	budget   *readBudget
}

// NewObjectsAPI builds the objects endpoints over store; their reads run
// within the Budget WithQueryLimits sets.
func NewObjectsAPI(store storage.ObjectStore, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *ObjectsAPI {
	return &ObjectsAPI{store: store, logger: logger, maxBytes: maxBodyBytes, budget: newReadBudget(applyOptions(opts), logger)}
}

// Register adds the objects, labels and refs routes to mux; wrap is
// applied to every handler.
func (a *ObjectsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	for pattern, h := range map[string]httpapi.BodyHandler{
		"POST /obj/create":      a.create,
		"POST /obj/read":        a.budget.json(a.read),
		"POST /obj/delete":      a.delete,
		"POST /objs/query":      a.budget.json(a.query),
		"GET /tags":             a.budget.json(a.listTags),
		"GET /aliases":          a.budget.json(a.listAliases),
		"POST /refs/read_batch": a.budget.json(a.readRefs),
		"PUT /objs/{object_id}/versions/{digest}/tags":         a.addTags,
		"POST /objs/{object_id}/versions/{digest}/tags/remove": a.removeTags,
		"PUT /objs/{object_id}/aliases":                        a.setAliases,
		"POST /objs/{object_id}/aliases/remove":                a.removeAliases,
	} {
		mux.Handle(pattern, wrap(httpapi.JSON(a.logger, a.maxBytes, h)))
	}
}

func (a *ObjectsAPI) create(r *http.Request, body []byte) (any, error) {
	var obj wire.ObjSchemaForInsert
	if err := wire.DecodeTop(body, wire.Fields{"obj": &obj}, "obj"); err != nil {
		return nil, err
	}
	req := storage.ObjCreateReq{Obj: obj.Storage()}
	if req.Obj.ProjectID == "" {
		return nil, wire.Missing("obj.project_id", " (form entity/project)")
	}
	if req.Obj.Val == nil {
		return nil, wire.Missing("obj.val", " (any JSON value)")
	}
	p, err := httpapi.Authorize(r.Context(), req.Obj.ProjectID, auth.Write)
	if err != nil {
		return nil, err
	}
	if err := storage.ValidateObjectID(req.Obj.ObjectID); err != nil {
		return nil, err
	}
	// The author is the caller, whatever the body claims.
	req.Obj.WBUserID = nil
	if p.UserID != "" {
		req.Obj.WBUserID = &p.UserID
	}
	res, err := a.store.CreateObject(r.Context(), req)
	return wire.ObjCreateRes(res), err
}

func (a *ObjectsAPI) read(r *http.Request, body []byte) (any, error) {
	var req storage.ObjReadReq
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "object_id": &req.ObjectID,
		"digest": &req.Digest, "metadata_only": &req.MetadataOnly, "include_tags_and_aliases": &req.IncludeTagsAndAliases},
		"project_id", "object_id", "digest")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	res, err := a.store.ReadObject(r.Context(), req)
	if err != nil {
		return nil, deletedError(err)
	}
	return wire.ObjReadRes{Obj: wire.NewObjSchema(res.Obj)}, nil
}

// deletedError adds deleted_at to the 404 of a deleted version: clients
// stop retrying when they see it.
func deletedError(err error) error {
	var del *storage.ObjectDeletedError
	if !errors.As(err, &del) {
		return err
	}
	return &httpapi.StatusError{Status: http.StatusNotFound, Msg: del.Error(),
		Extra: map[string]any{"deleted_at": wire.FormatTime(del.DeletedAt)}}
}

func (a *ObjectsAPI) query(r *http.Request, body []byte) (any, error) {
	var req storage.ObjQueryReq
	var filter *wire.ObjectVersionFilter
	var sortBy []wire.SortBy
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "filter": &filter,
		"limit": &req.Limit, "offset": &req.Offset, "sort_by": &sortBy, "metadata_only": &req.MetadataOnly,
		"include_storage_size": &req.IncludeStorageSize, "include_tags_and_aliases": &req.IncludeTagsAndAliases},
		"project_id")
	if err == nil {
		err = wire.CheckPaging(req.Limit, req.Offset)
	}
	if err != nil {
		return nil, err
	}
	req.Filter, req.SortBy = filter.Storage(), wire.StorageSort(sortBy)
	if _, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	res, err := a.store.QueryObjects(r.Context(), req)
	if err != nil {
		return nil, err
	}
	return wire.NewObjQueryRes(res), nil
}

func (a *ObjectsAPI) delete(r *http.Request, body []byte) (any, error) {
	var req storage.ObjDeleteReq
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "object_id": &req.ObjectID,
		"digests": &req.Digests}, "project_id", "object_id")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Write); err != nil {
		return nil, err
	}
	res, err := a.store.DeleteObjects(r.Context(), req)
	return wire.NewObjDeleteRes(res), err
}

// labels is a tags or aliases request. object_id, and for tags the
// version, come from the path; the version of an alias from the body.
type labels struct {
	projectID, objectID, digest string
	names                       []string
}

func decodeLabels(r *http.Request, body []byte, list string, digestInBody bool) (labels, error) {
	l := labels{objectID: r.PathValue("object_id"), digest: r.PathValue("digest")}
	fields, required := wire.Fields{"project_id": &l.projectID, list: &l.names}, []string{"project_id", list}
	if digestInBody {
		fields["digest"], required = &l.digest, append(required, "digest")
	}
	if err := wire.DecodeTop(body, fields, required...); err != nil {
		return l, err
	}
	_, err := httpapi.Authorize(r.Context(), l.projectID, auth.Write)
	return l, err
}

func (l labels) tags() storage.ObjTagsReq {
	return storage.ObjTagsReq{ProjectID: l.projectID, ObjectID: l.objectID, Digest: l.digest, Tags: l.names}
}

func (l labels) aliases() storage.ObjAliasesReq {
	return storage.ObjAliasesReq{ProjectID: l.projectID, ObjectID: l.objectID, Digest: l.digest, Aliases: l.names}
}

func (a *ObjectsAPI) addTags(r *http.Request, body []byte) (any, error) {
	l, err := decodeLabels(r, body, "tags", false)
	if err != nil {
		return nil, err
	}
	return struct{}{}, a.store.AddObjectTags(r.Context(), l.tags())
}

func (a *ObjectsAPI) removeTags(r *http.Request, body []byte) (any, error) {
	l, err := decodeLabels(r, body, "tags", false)
	if err != nil {
		return nil, err
	}
	return struct{}{}, a.store.RemoveObjectTags(r.Context(), l.tags())
}

func (a *ObjectsAPI) setAliases(r *http.Request, body []byte) (any, error) {
	l, err := decodeLabels(r, body, "aliases", true)
	if err != nil {
		return nil, err
	}
	return struct{}{}, a.store.SetObjectAliases(r.Context(), l.aliases())
}

func (a *ObjectsAPI) removeAliases(r *http.Request, body []byte) (any, error) {
	l, err := decodeLabels(r, body, "aliases", false)
	if err != nil {
		return nil, err
	}
	return struct{}{}, a.store.RemoveObjectAliases(r.Context(), l.aliases())
}

func (a *ObjectsAPI) listTags(r *http.Request, _ []byte) (any, error) {
	projectID := r.URL.Query().Get("project_id")
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	tags, err := a.store.ListTags(r.Context(), projectID)
	return map[string][]string{"tags": tags}, err
}

func (a *ObjectsAPI) listAliases(r *http.Request, _ []byte) (any, error) {
	projectID := r.URL.Query().Get("project_id")
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	aliases, err := a.store.ListAliases(r.Context(), projectID)
	return map[string][]string{"aliases": aliases}, err
}
