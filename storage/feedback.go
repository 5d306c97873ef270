package storage

import (
	"context"
	"encoding/json"
	"time"
)

// MaxFeedbackPayloadBytes bounds the JSON text of one feedback payload.
const MaxFeedbackPayloadBytes = 1 << 20

// Feedback is one stored feedback row, already validated by the caller
// (ids and created_at assigned, payload processed).
type Feedback struct {
	ID            string
	ProjectID     string
	WeaveRef      string
	WBUserID      string
	Creator       *string
	CreatedAt     time.Time
	FeedbackType  string
	Payload       json.RawMessage // a JSON object
	AnnotationRef *string
	RunnableRef   *string
	CallRef       *string
	TriggerRef    *string
	QueueID       *string
	// Extra holds the newer scorer and span fields that were set, as a JSON
	// object; nil when none were.
	Extra json.RawMessage
}

// FeedbackColumns are the columns of a feedback query result, in the order
// an unprojected query returns them.
var FeedbackColumns = []string{
	"id", "project_id", "weave_ref", "wb_user_id", "creator", "created_at", "feedback_type",
	"payload", "annotation_ref", "runnable_ref", "call_ref", "trigger_ref", "queue_id",
	"scorer_tags", "scorer_tag_reasons", "scorer_tag_confidences", "scorer_ratings", "scorer_rating_reasons",
	"scorer_rating_confidences", "span_agent_name", "span_agent_version", "span_status_code",
	"span_conversation_id", "span_trace_id", "scorer_trace_id",
}

// FeedbackQuery is an authorised /feedback/query. Fields are columns,
// dotted paths into payload (returned as text under the path as key) or
// "count(*)"; Where is the query document ({"$expr": ...}) over the same
// fields; JSON paths sort by existence, number, then text.
type FeedbackQuery struct {
	ProjectID string
	Fields    []string // nil: FeedbackColumns
	Where     json.RawMessage
	SortBy    []SortBy // nil: unspecified order
	Limit     *int64   // nil: no limit
	Offset    int64
}

// FeedbackQueryRes is the result of a feedback query: one JSON object per row and
// the number of rows the query matches before limit and offset.
type FeedbackQueryRes struct {
	Result     []json.RawMessage
	TotalCount int64
}

// FeedbackStore keeps feedback per project. Every method is scoped to its
// project: rows of another project are never read, counted or purged.
type FeedbackStore interface {
	// CreateFeedback stores rows atomically; a row whose id exists in its
	// project replaces it.
	CreateFeedback(ctx context.Context, rows []Feedback) error
	QueryFeedback(ctx context.Context, q FeedbackQuery) (FeedbackQueryRes, error)
	// PurgeFeedback hard-deletes the project's rows with these ids.
	PurgeFeedback(ctx context.Context, projectID string, ids []string) error
	// ReplaceFeedback deletes oldID and stores row in one transaction.
	ReplaceFeedback(ctx context.Context, projectID, oldID string, row Feedback) error
	// FeedbackForRefs returns, per weave_ref that has feedback, the JSON
	// list summary.weave.feedback holds (oldest first). Refs use the wire
	// form, e.g. weave:///entity/project/call/<id>.
	FeedbackForRefs(ctx context.Context, projectID string, refs []string) (map[string]json.RawMessage, error)
}
