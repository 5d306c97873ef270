package conformance

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/weftdev/weft/storage"
)

// unsetScorerSpanFields are the scorer and span fields of a row that set
// none of them: the reference's column defaults.
func unsetScorerSpanFields() map[string]any {
	return map[string]any{
		"scorer_tags": []any{}, "scorer_tag_reasons": map[string]any{}, "scorer_tag_confidences": map[string]any{},
		"scorer_ratings": map[string]any{}, "scorer_rating_reasons": map[string]any{}, "scorer_rating_confidences": map[string]any{},
		"span_agent_name": "", "span_agent_version": "", "span_status_code": "UNSET",
		"span_conversation_id": "", "span_trace_id": "", "scorer_trace_id": "",
	}
}

// testFeedbackScorerSpanFields: the scorer and span fields a row was
// stored with come back from queries, as columns that select, filter and
// read into; the calls' feedback lists carry the scorer fields.
func testFeedbackScorerSpanFields(t *testing.T, s storage.FeedbackStore) {
	scored := fb("e/p", "s1", callRef("e/p", "c1"), "wandb.runnable.monitor", `{"output":{"flagged":true}}`, base)
	scored.Extra = json.RawMessage(`{"scorer_tags":["safety-risk"],"scorer_tag_reasons":{"safety-risk":"blocked"},` +
		`"scorer_ratings":{"_rating_":0.7},"span_agent_name":"support-bot","span_status_code":"ERROR","scorer_trace_id":"t9"}`)
	createFeedback(t, s, scored, fb("e/p", "plain", callRef("e/p", "c1"), "custom", `{}`, base))
	rows, _ := queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p", Where: json.RawMessage(
		`{"$expr":{"$eq":[{"$getField":"span_agent_name"},{"$literal":"support-bot"}]}}`)})
	if len(rows) != 1 {
		t.Fatalf("filter on span_agent_name matched %d rows, want 1", len(rows))
	}
	// The fields set come back; those unset are left out.
	want := map[string]any{"scorer_tags": []any{"safety-risk"}, "scorer_tag_reasons": map[string]any{"safety-risk": "blocked"},
		"scorer_ratings": map[string]any{"_rating_": 0.7}, "span_agent_name": "support-bot",
		"span_status_code": "ERROR", "scorer_trace_id": "t9"}
	for k := range unsetScorerSpanFields() {
		v, set := want[k]
		got, ok := rows[0][k]
		if ok != set || !reflect.DeepEqual(got, v) {
			t.Errorf("%s = %#v (present %v), want %#v (present %v)", k, got, ok, v, set)
		}
	}
	rows, _ = queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p", Fields: []string{"id", "scorer_ratings._rating_", "span_status_code"},
		SortBy: []storage.SortBy{{Field: "id", Direction: "asc"}}})
	wantRows := []map[string]any{{"id": "plain", "scorer_ratings._rating_": "", "span_status_code": "UNSET"},
		{"id": "s1", "scorer_ratings._rating_": "0.7", "span_status_code": "ERROR"}}
	if !reflect.DeepEqual(rows, wantRows) {
		t.Errorf("projected\n got %v\nwant %v", rows, wantRows)
	}
	lists, err := s.FeedbackForRefs(context.Background(), "e/p", []string{callRef("e/p", "c1")})
	if err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	if err := json.Unmarshal(lists[callRef("e/p", "c1")], &list); err != nil || len(list) != 2 {
		t.Fatalf("feedback of c1: %s, %v", lists[callRef("e/p", "c1")], err)
	}
	for _, f := range list {
		if f["id"] == "s1" && !reflect.DeepEqual(f["scorer_tags"], []any{"safety-risk"}) {
			t.Errorf("calls feedback entry lacks scorer_tags: %v", f)
		}
		if _, ok := f["scorer_tag_confidences"]; ok {
			t.Errorf("calls feedback entry %v carries an unset scorer field", f["id"])
		}
	}
}
