package storekit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/storage/sqlgen"
)

// FeedbackColumns is the column order of feedback inserts, the order of
// FeedbackValues.
const FeedbackColumns = `project_id, id, weave_ref, feedback_type, payload, creator, created_at, wb_user_id,
	annotation_ref, runnable_ref, call_ref, trigger_ref, queue_id, extra`

// CheckFeedback refuses a row without a project, an id or a JSON payload.
func CheckFeedback(f storage.Feedback) error {
	if f.ProjectID == "" || f.ID == "" || !json.Valid(f.Payload) {
		return fmt.Errorf("feedback %q needs a project, an id and a JSON payload: %w", f.ID, storage.ErrInvalidArgument)
	}
	return nil
}

// CheckReplacement refuses a replacement row of another project.
func CheckReplacement(projectID string, row storage.Feedback) error {
	if row.ProjectID != projectID {
		return fmt.Errorf("replacement feedback belongs to project %q, not %q: %w", row.ProjectID, projectID, storage.ErrInvalidArgument)
	}
	return nil
}

// FeedbackValues are the values of f in FeedbackColumns order.
func FeedbackValues(f storage.Feedback) []any {
	var extra *string
	if f.Extra != nil {
		e := string(f.Extra)
		extra = &e
	}
	return []any{f.ProjectID, f.ID, f.WeaveRef, f.FeedbackType, string(f.Payload), f.Creator, f.CreatedAt.UTC(), f.WBUserID,
		f.AnnotationRef, f.RunnableRef, f.CallRef, f.TriggerRef, f.QueueID, extra}
}

// QueryFeedback answers storage.FeedbackStore.QueryFeedback.
func QueryFeedback(ctx context.Context, db TableSQL, q storage.FeedbackQuery) (storage.FeedbackQueryRes, error) {
	where, err := querylang.Parse(q.Where)
	if err != nil {
		return storage.FeedbackQueryRes{}, err
	}
	tq := sqlgen.TableQuery{Scope: []sqlgen.TableScope{{Column: "project_id", Value: q.ProjectID}},
		Fields: q.Fields, Where: where, SortBy: q.SortBy, Limit: q.Limit, Offset: q.Offset}
	rows, err := db.Rows(ctx, sqlgen.FeedbackTable(), tq)
	if err != nil {
		return storage.FeedbackQueryRes{}, fmt.Errorf("feedback query: %w", err)
	}
	count, err := db.Count(ctx, sqlgen.FeedbackTable(), tq)
	if err != nil {
		return storage.FeedbackQueryRes{}, fmt.Errorf("feedback count: %w", err)
	}
	for i, r := range rows {
		if rows[i], err = storage.DropUnsetFeedbackExtras(r, q.Fields); err != nil {
			return storage.FeedbackQueryRes{}, fmt.Errorf("feedback query: %w", err)
		}
	}
	return storage.FeedbackQueryRes{Result: rows, TotalCount: count}, nil
}

// feedbackOnCall are the fields of a summary.weave.feedback entry.
var feedbackOnCall = slices.Concat([]string{"id", "feedback_type", "weave_ref", "payload", "creator", "created_at",
	"wb_user_id", "runnable_ref", "call_ref", "trigger_ref", "annotation_ref"}, storage.FeedbackScorerFields)

// FeedbackForRefs answers storage.FeedbackStore.FeedbackForRefs, a query
// per chunk of refs; a backend chunks them as its parameters allow.
func FeedbackForRefs(ctx context.Context, db TableSQL, projectID string, refChunks [][]string) (map[string]json.RawMessage, error) {
	lists := map[string][]json.RawMessage{}
	for _, chunk := range refChunks {
		rows, err := db.Rows(ctx, sqlgen.FeedbackTable(), feedbackOfRefs(projectID, chunk))
		if err != nil {
			return nil, fmt.Errorf("feedback of calls: %w", err)
		}
		for _, r := range rows {
			// The row is the stored feedback as a JSON document; its
			// weave_ref key groups it.
			var key struct {
				WeaveRef string `json:"weave_ref"`
			}
			if err := json.Unmarshal(r, &key); err != nil {
				return nil, fmt.Errorf("feedback of calls: %w", err)
			}
			if r, err = storage.DropUnsetFeedbackExtras(r, nil); err != nil {
				return nil, fmt.Errorf("feedback of calls: %w", err)
			}
			lists[key.WeaveRef] = append(lists[key.WeaveRef], r)
		}
	}
	out := make(map[string]json.RawMessage, len(lists))
	for ref, list := range lists {
		b, err := json.Marshal(list)
		if err != nil {
			return nil, fmt.Errorf("feedback of %s: %w", ref, err)
		}
		out[ref] = b
	}
	return out, nil
}

// feedbackOfRefs selects the feedback of refs, oldest first.
func feedbackOfRefs(projectID string, refs []string) sqlgen.TableQuery {
	in := make([]querylang.Expr, len(refs))
	for i, r := range refs {
		in[i] = &querylang.Literal{Value: r}
	}
	return sqlgen.TableQuery{Scope: []sqlgen.TableScope{{Column: "project_id", Value: projectID}},
		Fields: slices.Clone(feedbackOnCall), Where: &querylang.In{Operand: &querylang.GetField{Path: "weave_ref"}, List: in},
		SortBy: []storage.SortBy{{Field: "created_at", Direction: "asc"}, {Field: "id", Direction: "asc"}}}
}
