package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
// an unprojected query returns them: the base ones, then the newer scorer
// and span fields.
var FeedbackColumns = slices.Concat([]string{
	"id", "project_id", "weave_ref", "wb_user_id", "creator", "created_at", "feedback_type",
	"payload", "annotation_ref", "runnable_ref", "call_ref", "trigger_ref", "queue_id",
}, FeedbackScorerFields, FeedbackSpanFields)

// FeedbackScorerFields may only be set on runnable feedback;
// FeedbackSpanFields name an agent span. Both are newer, optional fields
// kept in Feedback.Extra.
var (
	FeedbackScorerFields = []string{"scorer_tags", "scorer_tag_reasons", "scorer_tag_confidences",
		"scorer_ratings", "scorer_rating_reasons", "scorer_rating_confidences"}
	FeedbackSpanFields = []string{"span_agent_name", "span_agent_version", "span_status_code",
		"span_conversation_id", "span_trace_id", "scorer_trace_id"}
)

// IsFeedbackExtra reports whether field is one of the newer scorer and
// span fields.
func IsFeedbackExtra(field string) bool {
	return slices.Contains(FeedbackScorerFields, field) || slices.Contains(FeedbackSpanFields, field)
}

// IsFeedbackExtraDefault reports whether v is the value a newer client
// sends, and a row holds, for the extra field when it is unset.
func IsFeedbackExtraDefault(field string, v json.RawMessage) bool {
	switch s := string(bytes.TrimSpace(v)); s {
	case "", "null", "[]", "{}", `""`:
		return true
	case `"UNSET"`:
		return field == "span_status_code"
	}
	return false
}

// DropUnsetFeedbackExtras returns row (a feedback row as a JSON object)
// without the extra fields that hold their defaults, other than those
// kept names. Clients up to Weave 0.52.29 read rows into a model that
// refuses unknown fields, so a row carries the newer fields only when
// they were set or asked for, as the reference server's rows do. Keys
// keep their order.
func DropUnsetFeedbackExtras(row json.RawMessage, kept []string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(row))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("feedback row is not a JSON object")
	}
	out := bytes.NewBuffer(make([]byte, 0, len(row)))
	out.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("feedback row: %w", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("feedback row %s: %w", key, err)
		}
		if IsFeedbackExtra(key) && IsFeedbackExtraDefault(key, v) && !slices.Contains(kept, key) {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
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
