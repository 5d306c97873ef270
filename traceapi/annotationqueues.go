package traceapi

import (
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// Bounds of the annotation queue requests; the reference server has
// none, and these sit far above what its clients send.
const (
	MaxQueueNameBytes        = 1024
	MaxQueueListLen          = 100    // scorer_refs, display_fields
	MaxQueueCallsPerAdd      = 10_000 // call_ids of one add
	MaxQueueStatsIDs         = 1000   // queue_ids of one stats request
	maxQueueDescriptionBytes = 64 << 10
)

// AnnotationQueuesAPI serves annotation queues: their CRUD, the calls
// queued in them, their stats and each annotator's progress. The caller
// is the queue's creator, the items' adder and the annotator, whatever
// wb_user_id the body holds.
type AnnotationQueuesAPI struct {
	store    storage.AnnotationQueueStore
	logger   *slog.Logger
	maxBytes int64
	limits   querylang.Limits
	budget   *readBudget
	now      func() time.Time
}

// NewAnnotationQueuesAPI builds the annotation queue endpoints over
// store; their reads run within the Budget WithQueryLimits sets.
func NewAnnotationQueuesAPI(store storage.AnnotationQueueStore, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *AnnotationQueuesAPI {
	o := applyOptions(opts)
	return &AnnotationQueuesAPI{store: store, logger: logger, maxBytes: maxBodyBytes, limits: o.limits,
		budget: newReadBudget(o, logger), now: time.Now}
}

// Register adds the annotation queue routes to mux; wrap is applied to
// every handler.
func (a *AnnotationQueuesAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	for pattern, h := range map[string]httpapi.BodyHandler{
		"POST /annotation_queues":                                     a.create,
		"GET /annotation_queues/{queue_id}":                           a.budget.json(a.read),
		"PUT /annotation_queues/{queue_id}":                           a.update,
		"DELETE /annotation_queues/{queue_id}":                        a.delete,
		"POST /annotation_queues/stats":                               a.budget.json(a.stats),
		"POST /annotation_queues/{queue_id}/items":                    a.addCalls,
		"POST /annotation_queues/{queue_id}/items/query":              a.budget.json(a.itemsQuery),
		"POST /annotation_queues/{queue_id}/items/{item_id}/progress": a.progress,
	} {
		mux.Handle(pattern, wrap(httpapi.JSON(a.logger, a.maxBytes, h)))
	}
	mux.Handle("POST /annotation_queues/query", wrap(http.HandlerFunc(a.streamQuery)))
}

// annotationQueueSchema is AnnotationQueueSchema.
type annotationQueueSchema struct {
	ID          string     `json:"id"`
	ProjectID   string     `json:"project_id"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	ScorerRefs  []string   `json:"scorer_refs"`
	CreatedAt   wire.Time  `json:"created_at"`
	CreatedBy   string     `json:"created_by"`
	UpdatedAt   wire.Time  `json:"updated_at"`
	DeletedAt   *wire.Time `json:"deleted_at"`
}

func newQueueSchema(q storage.AnnotationQueue) annotationQueueSchema {
	refs := q.ScorerRefs
	if refs == nil {
		refs = []string{}
	}
	return annotationQueueSchema{ID: q.ID, ProjectID: q.ProjectID, Name: q.Name, Description: q.Description,
		ScorerRefs: refs, CreatedAt: wire.Time{Time: q.CreatedAt}, CreatedBy: q.CreatedBy,
		UpdatedAt: wire.Time{Time: q.UpdatedAt}, DeletedAt: wireTime(q.DeletedAt)}
}

// annotationQueueItemSchema is AnnotationQueueItemSchema.
type annotationQueueItemSchema struct {
	ID              string     `json:"id"`
	ProjectID       string     `json:"project_id"`
	QueueID         string     `json:"queue_id"`
	CallID          string     `json:"call_id"`
	CallStartedAt   wire.Time  `json:"call_started_at"`
	CallEndedAt     *wire.Time `json:"call_ended_at"`
	CallOpName      string     `json:"call_op_name"`
	CallTraceID     string     `json:"call_trace_id"`
	DisplayFields   []string   `json:"display_fields"`
	AddedBy         *string    `json:"added_by"`
	AnnotationState string     `json:"annotation_state"`
	AnnotatorUserID string     `json:"annotator_user_id"`
	CreatedAt       wire.Time  `json:"created_at"`
	CreatedBy       string     `json:"created_by"`
	UpdatedAt       wire.Time  `json:"updated_at"`
	DeletedAt       *wire.Time `json:"deleted_at"`
	PositionInQueue *int64     `json:"position_in_queue"`
}

func newItemSchema(it storage.AnnotationQueueItem) annotationQueueItemSchema {
	display := it.DisplayFields
	if display == nil {
		display = []string{}
	}
	return annotationQueueItemSchema{ID: it.ID, ProjectID: it.ProjectID, QueueID: it.QueueID, CallID: it.CallID,
		CallStartedAt: wire.Time{Time: it.CallStartedAt}, CallEndedAt: wireTime(it.CallEndedAt),
		CallOpName: it.CallOpName, CallTraceID: it.CallTraceID, DisplayFields: display, AddedBy: it.AddedBy,
		AnnotationState: it.AnnotationState, AnnotatorUserID: it.AnnotatorUserID,
		CreatedAt: wire.Time{Time: it.CreatedAt}, CreatedBy: it.CreatedBy, UpdatedAt: wire.Time{Time: it.UpdatedAt},
		DeletedAt: wireTime(it.DeletedAt), PositionInQueue: it.PositionInQueue}
}

func wireTime(t *time.Time) *wire.Time {
	if t == nil {
		return nil
	}
	return &wire.Time{Time: *t}
}

// stamp is the time a write records: now, at the microsecond both
// stores keep.
func (a *AnnotationQueuesAPI) stamp() time.Time { return a.now().UTC().Truncate(time.Microsecond) }

func (a *AnnotationQueuesAPI) create(r *http.Request, body []byte) (any, error) {
	var q storage.AnnotationQueue
	var userID string
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.ProjectID, "name": &q.Name, "description": &q.Description,
		"scorer_refs": &q.ScorerRefs, "wb_user_id": &userID}, "project_id", "name", "scorer_refs")
	if err != nil {
		return nil, err
	}
	p, err := httpapi.Authorize(r.Context(), q.ProjectID, auth.Write)
	if err != nil {
		return nil, err
	}
	if err := checkQueueFields(&q.Name, &q.Description, &q.ScorerRefs); err != nil {
		return nil, err
	}
	q.ID, q.CreatedBy = storage.NewAnnotationID(), p.UserID
	q.CreatedAt = a.stamp()
	q.UpdatedAt = q.CreatedAt
	if err := a.store.CreateAnnotationQueue(r.Context(), q); err != nil {
		return nil, err
	}
	return map[string]string{"id": q.ID}, nil
}

// checkQueueFields bounds the queue fields that are set.
func checkQueueFields(name, description *string, scorerRefs *[]string) error {
	if name != nil && len(*name) > MaxQueueNameBytes {
		return &wire.FieldError{Field: "name", Msg: fmt.Sprintf("is %d bytes, at most %d", len(*name), MaxQueueNameBytes)}
	}
	if description != nil && len(*description) > maxQueueDescriptionBytes {
		return &wire.FieldError{Field: "description", Msg: fmt.Sprintf("is %d bytes, at most %d", len(*description), maxQueueDescriptionBytes)}
	}
	if scorerRefs != nil {
		return checkList("scorer_refs", *scorerRefs, MaxQueueListLen)
	}
	return nil
}

func checkList(field string, vals []string, most int) error {
	if len(vals) > most {
		return &wire.FieldError{Field: field, Msg: fmt.Sprintf("has %d entries, at most %d; send fewer", len(vals), most)}
	}
	return nil
}

// queueInQuery reads the queue_id path value and the project_id query
// parameter of a read or delete, and authorises the caller.
func queueInQuery(r *http.Request, need auth.Access) (projectID, queueID string, err error) {
	projectID, queueID = r.URL.Query().Get("project_id"), r.PathValue("queue_id")
	_, err = httpapi.Authorize(r.Context(), projectID, need)
	return projectID, queueID, err
}

func (a *AnnotationQueuesAPI) read(r *http.Request, _ []byte) (any, error) {
	projectID, queueID, err := queueInQuery(r, auth.Read)
	if err != nil {
		return nil, err
	}
	q, err := a.store.ReadAnnotationQueue(r.Context(), projectID, queueID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"queue": newQueueSchema(q)}, nil
}

func (a *AnnotationQueuesAPI) delete(r *http.Request, _ []byte) (any, error) {
	projectID, queueID, err := queueInQuery(r, auth.Write)
	if err != nil {
		return nil, err
	}
	q, err := a.store.DeleteAnnotationQueue(r.Context(), projectID, queueID, a.stamp())
	if err != nil {
		return nil, err
	}
	return map[string]any{"queue": newQueueSchema(q)}, nil
}

func (a *AnnotationQueuesAPI) update(r *http.Request, body []byte) (any, error) {
	u := storage.AnnotationQueueUpdate{ID: r.PathValue("queue_id")}
	var userID string
	err := wire.DecodeTop(body, wire.Fields{"project_id": &u.ProjectID, "name": &u.Name, "description": &u.Description,
		"scorer_refs": &u.ScorerRefs, "wb_user_id": &userID}, "project_id")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), u.ProjectID, auth.Write); err != nil {
		return nil, err
	}
	if err := checkQueueFields(u.Name, u.Description, u.ScorerRefs); err != nil {
		return nil, err
	}
	u.UpdatedAt = a.stamp()
	q, err := a.store.UpdateAnnotationQueue(r.Context(), u)
	if err != nil {
		return nil, err
	}
	return map[string]any{"queue": newQueueSchema(q)}, nil
}

// streamQuery answers /annotation_queues/query as JSON Lines, one queue
// a line, within the read budget.
func (a *AnnotationQueuesAPI) streamQuery(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadJSON(r, a.maxBytes)
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	a.budget.stream(w, r, func(r *http.Request) (iter.Seq2[any, error], error) {
		q, err := a.decodeQueuesQuery(r, body)
		if err != nil {
			return nil, err
		}
		return func(yield func(any, error) bool) {
			queues, err := a.store.QueryAnnotationQueues(r.Context(), q)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, queue := range queues {
				if !yield(newQueueSchema(queue), nil) {
					return
				}
			}
		}, nil
	})
}

func (a *AnnotationQueuesAPI) decodeQueuesQuery(r *http.Request, body []byte) (storage.AnnotationQueuesQuery, error) {
	var q storage.AnnotationQueuesQuery
	var limit, offset *int64
	var sortBy []wire.SortBy
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.ProjectID, "name": &q.Name, "sort_by": &sortBy,
		"limit": &limit, "offset": &offset}, "project_id")
	if err != nil {
		return q, err
	}
	if q.Limit, q.Offset, err = paging(limit, offset); err != nil {
		return q, err
	}
	if q.SortBy, err = a.annotationSort(sortBy, storage.AnnotationQueueSortFields); err != nil {
		return q, err
	}
	_, err = httpapi.Authorize(r.Context(), q.ProjectID, auth.Read)
	return q, err
}

// paging checks limit and offset and returns them, 0 for absent.
func paging(limit, offset *int64) (int64, int64, error) {
	if err := wire.CheckPaging(limit, offset); err != nil {
		return 0, 0, err
	}
	var l, o int64
	if limit != nil {
		l = *limit
	}
	if offset != nil {
		o = *offset
	}
	return l, o, nil
}

// annotationSort bounds sort_by and checks its fields against those the
// stores sort by, so a bad one is a 400 naming the term.
func (a *AnnotationQueuesAPI) annotationSort(sortBy []wire.SortBy, fields []string) ([]storage.SortBy, error) {
	if err := checkSort(a.limits, sortBy); err != nil {
		return nil, err
	}
	for i, s := range sortBy {
		if !slices.Contains(fields, s.Field) {
			return nil, &wire.FieldError{Field: fmt.Sprintf("sort_by[%d].field", i),
				Msg: fmt.Sprintf("cannot sort by %q; use one of %s", s.Field, strings.Join(fields, ", "))}
		}
	}
	return wire.StorageSort(sortBy), nil
}

func (a *AnnotationQueuesAPI) addCalls(r *http.Request, body []byte) (any, error) {
	req := storage.AnnotationQueueAddCalls{QueueID: r.PathValue("queue_id")}
	var userID string
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "call_ids": &req.CallIDs,
		"display_fields": &req.DisplayFields, "wb_user_id": &userID}, "project_id", "call_ids", "display_fields")
	if err != nil {
		return nil, err
	}
	p, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Write)
	if err != nil {
		return nil, err
	}
	if len(req.CallIDs) > MaxQueueCallsPerAdd {
		return nil, fmt.Errorf("call_ids has %d ids, at most %d; add them in several requests: %w",
			len(req.CallIDs), MaxQueueCallsPerAdd, storage.ErrTooLarge)
	}
	if err := checkList("display_fields", req.DisplayFields, MaxQueueListLen); err != nil {
		return nil, err
	}
	req.AddedBy, req.At = p.UserID, a.stamp()
	res, err := a.store.AddAnnotationQueueCalls(r.Context(), req)
	if err != nil {
		return nil, err
	}
	return map[string]int{"added_count": res.Added, "duplicates": res.Duplicates}, nil
}

// itemsFilter is AnnotationQueueItemsFilter; nested, so unknown keys
// pass. id is the filter the reference server reads an item with.
type itemsFilter struct {
	ID               *string  `json:"id"`
	CallID           *string  `json:"call_id"`
	CallOpName       *string  `json:"call_op_name"`
	CallTraceID      *string  `json:"call_trace_id"`
	AddedBy          *string  `json:"added_by"`
	AnnotationStates []string `json:"annotation_states"`
}

func (a *AnnotationQueuesAPI) itemsQuery(r *http.Request, body []byte) (any, error) {
	q := storage.AnnotationQueueItemsQuery{QueueID: r.PathValue("queue_id")}
	var f itemsFilter
	var limit, offset *int64
	var sortBy []wire.SortBy
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.ProjectID, "filter": &f, "sort_by": &sortBy,
		"limit": &limit, "offset": &offset, "include_position": &q.IncludePosition}, "project_id")
	if err != nil {
		return nil, err
	}
	for i, s := range f.AnnotationStates {
		if !slices.Contains(storage.AnnotationStates, s) {
			return nil, &wire.FieldError{Field: fmt.Sprintf("filter.annotation_states[%d]", i), Schema: wire.SchemaLiteral,
				Msg: fmt.Sprintf("%q is not a state; use %s", s, strings.Join(storage.AnnotationStates, ", "))}
		}
	}
	q.Filter = storage.AnnotationQueueItemsFilter(f)
	if q.Limit, q.Offset, err = paging(limit, offset); err != nil {
		return nil, err
	}
	if q.SortBy, err = a.annotationSort(sortBy, storage.AnnotationQueueItemSortFields); err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), q.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	items, err := a.store.QueryAnnotationQueueItems(r.Context(), q)
	if err != nil {
		return nil, err
	}
	out := make([]annotationQueueItemSchema, len(items))
	for i, it := range items {
		out[i] = newItemSchema(it)
	}
	return map[string]any{"items": out}, nil
}

func (a *AnnotationQueuesAPI) stats(r *http.Request, body []byte) (any, error) {
	var projectID string
	var ids []string
	err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID, "queue_ids": &ids}, "project_id", "queue_ids")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	if err := checkList("queue_ids", ids, MaxQueueStatsIDs); err != nil {
		return nil, err
	}
	stats, err := a.store.AnnotationQueuesStats(r.Context(), projectID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(stats))
	for i, s := range stats {
		out[i] = map[string]any{"queue_id": s.QueueID, "total_items": s.TotalItems, "completed_items": s.CompletedItems}
	}
	return map[string]any{"stats": out}, nil
}

// progress sets the caller's own state of an item: the annotator is the
// authenticated key's user, never one named in the body.
func (a *AnnotationQueuesAPI) progress(r *http.Request, body []byte) (any, error) {
	u := storage.AnnotatorProgressUpdate{QueueID: r.PathValue("queue_id"), ItemID: r.PathValue("item_id")}
	var userID string
	err := wire.DecodeTop(body, wire.Fields{"project_id": &u.ProjectID, "annotation_state": &u.State,
		"wb_user_id": &userID}, "project_id", "annotation_state")
	if err != nil {
		return nil, err
	}
	p, err := httpapi.Authorize(r.Context(), u.ProjectID, auth.Write)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(storage.AnnotatorStates, u.State) {
		return nil, &wire.FieldError{Field: "annotation_state",
			Msg: fmt.Sprintf("%q is not a state an annotator sets; use %s", u.State, strings.Join(storage.AnnotatorStates, ", "))}
	}
	if p.UserID == "" {
		return nil, httpapi.Errorf(http.StatusBadRequest, "this API key has no user, and progress is kept per user; "+
			"annotate with a key created for a user")
	}
	u.AnnotatorID, u.ProgressID, u.At = p.UserID, storage.NewAnnotationID(), a.stamp()
	it, err := a.store.UpdateAnnotatorProgress(r.Context(), u)
	if err != nil {
		return nil, err
	}
	return map[string]any{"item": newItemSchema(it)}, nil
}
