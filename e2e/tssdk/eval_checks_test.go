package tssdk_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// evaluateCall finds the Evaluation.evaluate root whose self is the named
// evaluation object.
func evaluateCall(t *testing.T, calls []call, evalName string) call {
	t.Helper()
	for _, c := range withOp(calls, "Evaluation.evaluate") {
		inputs, _ := c["inputs"].(map[string]any)
		if self, _ := inputs["self"].(string); strings.Contains(self, "/object/"+evalName+":") {
			return c
		}
	}
	t.Fatalf("no Evaluation.evaluate call of %s", evalName)
	return nil
}

func checkEvaluation(t *testing.T, c *client, calls []call, res scriptResult) {
	eval := evaluateCall(t, calls, "qa-eval")
	if eval["parent_id"] != nil || eval.str("ended_at") == "" || eval["exception"] != nil {
		t.Errorf("evaluate call: %v", eval)
	}
	rows := childrenOf(calls, eval, "Evaluation.predictAndScore")
	if len(rows) != 3 {
		t.Fatalf("%d predictAndScore calls under the evaluation; want one per dataset row (3)", len(rows))
	}
	for _, row := range rows {
		models, scores := childrenOf(calls, row, "fakeModel"), childrenOf(calls, row, "exactMatch")
		if len(models) != 1 || len(scores) != 1 || scores[0]["output"] != true {
			t.Errorf("row %s: model calls %v, scorer calls %v", row.str("id"), models, scores)
		}
		inputs, _ := row["inputs"].(map[string]any)
		example, _ := inputs["example"].(string)
		if !strings.Contains(example, "/object/qa:"+res.DatasetDigest+"/attr/rows/id/") {
			t.Errorf("predictAndScore example %v is no row ref of dataset qa:%s", inputs["example"], res.DatasetDigest)
		}
	}
	if !jsonEq(res.EvalSummary["exactMatch"], map[string]any{"true_count": 3, "true_fraction": 1}) {
		t.Errorf("the SDK's summary scores %v; want 3 of 3 exact matches", res.EvalSummary["exactMatch"])
	}
	if !jsonEq(eval["output"], res.EvalSummary) {
		t.Errorf("evaluate output stored %v; the SDK returned %v", eval["output"], res.EvalSummary)
	}
	var objs struct {
		Objs []struct {
			ObjectID string `json:"object_id"`
		} `json:"objs"`
	}
	filter := map[string]any{"leaf_object_classes": []string{"Evaluation"}, "latest_only": true}
	if c.ok(t, "/objs/query", map[string]any{"project_id": project, "filter": filter, "metadata_only": true}, &objs) {
		var ids []string
		for _, o := range objs.Objs {
			ids = append(ids, o.ObjectID)
		}
		if slices.Sort(ids); !slices.Equal(ids, []string{"imperative-eval", "qa-eval"}) {
			t.Errorf("Evaluation objects %v; want imperative-eval and qa-eval", ids)
		}
	}
}

func checkFeedback(t *testing.T, c *client, calls []call) {
	var res struct {
		Result []struct {
			FeedbackType string          `json:"feedback_type"`
			WeaveRef     string          `json:"weave_ref"`
			Payload      json.RawMessage `json:"payload"`
			WBUserID     string          `json:"wb_user_id"`
		} `json:"result"`
	}
	if !c.ok(t, "/feedback/query", map[string]any{"project_id": project}, &res) {
		return
	}
	if len(res.Result) != 1 {
		t.Fatalf("%d feedback rows; want the one logScore sent: %+v", len(res.Result), res.Result)
	}
	f := res.Result[0]
	var payload any
	_ = json.Unmarshal(f.Payload, &payload)
	if f.FeedbackType != "wandb.runnable.correct" || !jsonEq(payload, map[string]any{"output": true}) || f.WBUserID != sdkUser {
		t.Errorf("feedback %+v", f)
	}
	id, ok := strings.CutPrefix(f.WeaveRef, "weave:///"+project+"/call/")
	target := slices.IndexFunc(calls, func(c call) bool { return c.str("id") == id })
	if !ok || target < 0 {
		t.Fatalf("feedback weave_ref %s names no stored call", f.WeaveRef)
	}
	if eval := evaluateCall(t, calls, "imperative-eval"); calls[target].str("trace_id") != eval.str("trace_id") {
		t.Errorf("feedback targets %s (%s), outside the imperative evaluation's trace", id, calls[target].op())
	}
}

// checkIsolation reads the SDK's data with a key of another entity: every
// read is refused and refs into the project resolve to null.
func checkIsolation(t *testing.T, other *client, res scriptResult) {
	for path, body := range map[string]any{
		"/calls/stream_query":   map[string]any{"project_id": project},
		"/obj/read":             map[string]any{"project_id": project, "object_id": "settings", "digest": res.SettingsDigest},
		"/objs/query":           map[string]any{"project_id": project},
		"/table/query_stats":    map[string]any{"project_id": project, "digest": "x"},
		"/threads/stream_query": map[string]any{"project_id": project},
		"/feedback/query":       map[string]any{"project_id": project},
	} {
		if status, out := other.post(path, body); status != 403 || strings.Contains(string(out), "fake-model") {
			t.Errorf("%s with another entity's key = %d %s; want 403", path, status, out)
		}
	}
	var refs struct{ Vals []any }
	ref := "weave:///" + project + "/object/settings:" + res.SettingsDigest
	if other.ok(t, "/refs/read_batch", map[string]any{"refs": []string{ref}}, &refs) && !jsonEq(refs.Vals, []any{nil}) {
		t.Errorf("%s read with another entity's key = %v; want [null]", ref, refs.Vals)
	}
}
