package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Annotation states of a queue item, as the reference server names them.
// An item no annotator has touched is unstarted; a progress record holds
// one annotator's in_progress, completed or skipped.
const (
	AnnotationUnstarted  = "unstarted"
	AnnotationInProgress = "in_progress"
	AnnotationCompleted  = "completed"
	AnnotationSkipped    = "skipped"
)

// AnnotationStates are every state an item shows; AnnotatorStates the
// ones an annotator may set.
var (
	AnnotationStates = []string{AnnotationUnstarted, AnnotationInProgress, AnnotationCompleted, AnnotationSkipped}
	AnnotatorStates  = []string{AnnotationInProgress, AnnotationCompleted, AnnotationSkipped}
)

// Sort fields of queue and item queries, each mapped to its column.
// Every query ends with id ascending, so equal keys keep one order.
var (
	AnnotationQueueSortFields     = []string{"id", "name", "created_at", "updated_at"}
	AnnotationQueueItemSortFields = []string{"call_started_at", "call_op_name", "created_at", "updated_at"}
)

// AnnotationQueue is one queue of a project: the calls added to it are
// reviewed against its scorers. A deleted queue keeps its row with
// DeletedAt set and is no longer read, changed or filled.
type AnnotationQueue struct {
	ProjectID   string
	ID          string
	Name        string
	Description string
	ScorerRefs  []string
	CreatedAt   time.Time
	CreatedBy   string
	UpdatedAt   time.Time
	DeletedAt   *time.Time
}

// AnnotationQueueUpdate changes the fields that are set; UpdatedAt is
// stamped when at least one is.
type AnnotationQueueUpdate struct {
	ProjectID   string
	ID          string
	Name        *string
	Description *string
	ScorerRefs  *[]string
	UpdatedAt   time.Time
}

// Changes reports whether the update sets any field.
func (u AnnotationQueueUpdate) Changes() bool {
	return u.Name != nil || u.Description != nil || u.ScorerRefs != nil
}

// Apply returns q with the update's fields set.
func (u AnnotationQueueUpdate) Apply(q AnnotationQueue) AnnotationQueue {
	if !u.Changes() {
		return q
	}
	if u.Name != nil {
		q.Name = *u.Name
	}
	if u.Description != nil {
		q.Description = *u.Description
	}
	if u.ScorerRefs != nil {
		q.ScorerRefs = slices.Clone(*u.ScorerRefs)
	}
	q.UpdatedAt = u.UpdatedAt
	return q
}

// AnnotationQueuesQuery lists a project's live queues. Name, when set,
// keeps queues whose name contains it, ignoring case. SortBy nil is
// newest first.
type AnnotationQueuesQuery struct {
	ProjectID string
	Name      *string
	SortBy    []SortBy
	Limit     int64 // 0 = no limit
	Offset    int64
}

// AnnotationQueueItem is a call in a queue. The call's started_at,
// ended_at, op_name and trace_id are copied when it is added, so the
// queue reads without the calls. AnnotationState and AnnotatorUserID are
// the most recent progress record's of any annotator (unstarted and ""
// when there is none).
type AnnotationQueueItem struct {
	ProjectID       string
	ID              string
	QueueID         string
	CallID          string
	CallStartedAt   time.Time
	CallEndedAt     *time.Time
	CallOpName      string
	CallTraceID     string
	DisplayFields   []string
	AddedBy         *string
	AnnotationState string
	AnnotatorUserID string
	CreatedAt       time.Time
	CreatedBy       string
	UpdatedAt       time.Time
	DeletedAt       *time.Time
	// PositionInQueue is the 1-based place of the item in the queue in
	// the query's order, before AnnotationStates filtered it; set only
	// when asked for.
	PositionInQueue *int64
}

// AnnotationQueueItemsFilter narrows an items query; every set field
// must match. The state filter applies after positions are numbered.
type AnnotationQueueItemsFilter struct {
	ID               *string
	CallID           *string
	CallOpName       *string
	CallTraceID      *string
	AddedBy          *string
	AnnotationStates []string
}

// AnnotationQueueItemsQuery reads the items of one live queue. SortBy
// nil is the order they were added in.
type AnnotationQueueItemsQuery struct {
	ProjectID       string
	QueueID         string
	Filter          AnnotationQueueItemsFilter
	SortBy          []SortBy
	Limit           int64 // 0 = no limit
	Offset          int64
	IncludePosition bool
}

// AnnotationQueueAddCalls adds calls of the project to a live queue. Ids
// that are not calls of the project are not added; ids already in the
// queue are counted as duplicates.
type AnnotationQueueAddCalls struct {
	ProjectID     string
	QueueID       string
	CallIDs       []string
	DisplayFields []string
	AddedBy       string
	At            time.Time
}

// AnnotationQueueAddRes counts the distinct ids added and the distinct
// ids the queue already held.
type AnnotationQueueAddRes struct {
	Added      int
	Duplicates int
}

// AnnotationQueueStats counts a queue's items and those completed or
// skipped by at least one annotator.
type AnnotationQueueStats struct {
	QueueID        string
	TotalItems     int64
	CompletedItems int64
}

// AnnotatorProgressUpdate sets one annotator's state of one item.
// ProgressID names the record if this is the annotator's first.
type AnnotatorProgressUpdate struct {
	ProjectID   string
	QueueID     string
	ItemID      string
	AnnotatorID string
	State       string
	ProgressID  string
	At          time.Time
}

// AnnotationQueueStore keeps annotation queues, their items and every
// annotator's progress per project. Every method is scoped to its
// project: another project's queues, items and calls are never read.
type AnnotationQueueStore interface {
	CreateAnnotationQueue(ctx context.Context, q AnnotationQueue) error
	QueryAnnotationQueues(ctx context.Context, q AnnotationQueuesQuery) ([]AnnotationQueue, error)
	// ReadAnnotationQueue returns a live queue, or ErrNotFound.
	ReadAnnotationQueue(ctx context.Context, projectID, id string) (AnnotationQueue, error)
	// UpdateAnnotationQueue applies u to a live queue and returns it.
	UpdateAnnotationQueue(ctx context.Context, u AnnotationQueueUpdate) (AnnotationQueue, error)
	// DeleteAnnotationQueue marks a live queue deleted at at and returns
	// it as deleted; a deleted or unknown queue is ErrNotFound.
	DeleteAnnotationQueue(ctx context.Context, projectID, id string, at time.Time) (AnnotationQueue, error)
	// AddAnnotationQueueCalls adds calls to a live queue (ErrNotFound
	// for another).
	AddAnnotationQueueCalls(ctx context.Context, req AnnotationQueueAddCalls) (AnnotationQueueAddRes, error)
	// QueryAnnotationQueueItems reads a live queue's items (ErrNotFound
	// for another queue).
	QueryAnnotationQueueItems(ctx context.Context, q AnnotationQueueItemsQuery) ([]AnnotationQueueItem, error)
	// AnnotationQueuesStats answers one entry per distinct id, in the
	// order asked; an id naming no queue counts nothing.
	AnnotationQueuesStats(ctx context.Context, projectID string, queueIDs []string) ([]AnnotationQueueStats, error)
	// UpdateAnnotatorProgress moves the annotator's state of an item of a
	// live queue as CheckAnnotatorTransition allows, and returns the item
	// as an items query reads it. An unknown queue or item is ErrNotFound.
	UpdateAnnotatorProgress(ctx context.Context, u AnnotatorProgressUpdate) (AnnotationQueueItem, error)
}

// NewAnnotationID returns a new queue, item or progress id: a UUIDv7, so
// ids sort by creation.
func NewAnnotationID() string { return uuid.Must(uuid.NewV7()).String() }

// CheckAnnotatorTransition says whether an annotator whose record holds
// current ("" when they have none) may set next. A first record may take
// any annotator state; afterwards in_progress and unstarted may become
// completed or skipped, and setting the state a record holds is a no-op
// (noop true), so a retried request succeeds. Refusals wrap
// ErrInvalidArgument.
func CheckAnnotatorTransition(current, next string) (noop bool, err error) {
	if !slices.Contains(AnnotatorStates, next) {
		return false, fmt.Errorf("annotation_state %q is not one of %s: %w", next, strings.Join(AnnotatorStates, ", "), ErrInvalidArgument)
	}
	switch {
	case current == "":
		return false, nil
	case current == next:
		return true, nil
	case next == AnnotationInProgress:
		return false, fmt.Errorf("cannot move annotation_state from %q back to %q: in_progress is only set on an item "+
			"the annotator has not started: %w", current, next, ErrInvalidArgument)
	case current == AnnotationInProgress || current == AnnotationUnstarted:
		return false, nil
	}
	return false, fmt.Errorf("cannot move annotation_state from %q to %q: a completed or skipped item is final: %w",
		current, next, ErrInvalidArgument)
}

// AnnotationOrder checks sortBy against fields and returns it with
// directions lower-cased and id ascending appended as the last key; nil
// or empty sortBy gives def. Unknown fields wrap ErrInvalidArgument.
func AnnotationOrder(sortBy []SortBy, fields []string, def []SortBy) ([]SortBy, error) {
	if len(sortBy) == 0 {
		return def, nil
	}
	out := make([]SortBy, 0, len(sortBy)+1)
	for _, s := range sortBy {
		dir := strings.ToLower(s.Direction)
		if !slices.Contains(fields, s.Field) || (dir != "asc" && dir != "desc") {
			return nil, fmt.Errorf("cannot sort by %q %q; sort by one of %s, asc or desc: %w",
				s.Field, s.Direction, strings.Join(fields, ", "), ErrInvalidArgument)
		}
		out = append(out, SortBy{Field: s.Field, Direction: dir})
	}
	return append(out, SortBy{Field: "id", Direction: "asc"}), nil
}

// Default orders: queues newest first, items in the order they were
// added.
var (
	AnnotationQueueDefaultOrder     = []SortBy{{Field: "created_at", Direction: "desc"}, {Field: "id", Direction: "asc"}}
	AnnotationQueueItemDefaultOrder = []SortBy{{Field: "created_at", Direction: "asc"}, {Field: "id", Direction: "asc"}}
)

// OrderBySQL renders an order checked by AnnotationOrder, each field
// prefixed by prefix (a table alias and dot, or "").
func OrderBySQL(order []SortBy, prefix string) string {
	terms := make([]string, len(order))
	for i, s := range order {
		terms[i] = prefix + s.Field + " " + strings.ToUpper(s.Direction)
	}
	return strings.Join(terms, ", ")
}
