package traceapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

const noteCallRef = "weave:///acme/p/call/c1"

func noteReq(text string) map[string]any {
	return map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "wandb.note.1",
		"payload": map[string]any{"note": text}}
}

func TestFeedbackCreateTSClientSample(t *testing.T) {
	raw, err := os.ReadFile("testdata/17-feedback-create.json")
	if err != nil {
		t.Fatal(err)
	}
	var sample struct {
		Request struct{ Body json.RawMessage }
	}
	if err := json.Unmarshal(raw, &sample); err != nil {
		t.Fatal(err)
	}
	e := newStoreEnv(t)
	e.caller.Entity = "acme"
	out := e.expectStatus(t, "/feedback/create", string(sample.Request.Body), http.StatusOK)
	id, _ := out["id"].(string)
	if id == "" || out["wb_user_id"] != "user-1" || out["created_at"] == nil {
		t.Fatalf("create answer %v lacks id, wb_user_id or created_at", out)
	}
	res := e.expectStatus(t, "/feedback/query", `{"project_id":"acme/demo","fields":["id","feedback_type","payload.output","runnable_ref"]}`, http.StatusOK)
	rows := res["result"].([]any)
	if len(rows) != 1 || res["total_count"] != 1.0 {
		t.Fatalf("query: %v", res)
	}
	row := rows[0].(map[string]any)
	if row["id"] != id || row["feedback_type"] != "wandb.runnable.correct" || row["payload.output"] != "true" ||
		!strings.HasPrefix(row["runnable_ref"].(string), "weave:///acme/demo/object/correct:") {
		t.Fatalf("stored row %v", row)
	}
}

func TestFeedbackReactionNames(t *testing.T) {
	e := newStoreEnv(t)
	out := e.expectStatus(t, "/feedback/create", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef,
		"feedback_type": "wandb.reaction.1", "payload": map[string]any{"emoji": "👍🏽"}}, http.StatusOK)
	want := map[string]any{"emoji": "👍🏽", "alias": ":thumbs_up_medium_skin_tone:", "detoned": "👍", "detoned_alias": ":thumbs_up:"}
	if fmt.Sprint(out["payload"]) != fmt.Sprint(want) {
		t.Fatalf("reaction payload %v, want %v", out["payload"], want)
	}
}

func TestFeedbackCreateRejects(t *testing.T) {
	e := newStoreEnv(t)
	big := strings.Repeat("x", 1<<20)
	withRef := func(typ, field, ref string, payload map[string]any) map[string]any {
		return map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": typ, field: ref, "payload": payload}
	}
	cases := []struct {
		name string
		body any
		want int
	}{
		{"two emoji", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "wandb.reaction.1", "payload": map[string]any{"emoji": "👍👎"}}, 400},
		{"no emoji", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "wandb.reaction.1", "payload": map[string]any{"emoji": "ok"}}, 400},
		{"emoji not a string", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "wandb.reaction.1", "payload": map[string]any{"emoji": 1}}, 400},
		{"empty note", noteReq(""), 400},
		{"long note", noteReq(strings.Repeat("é", 1025)), 400},
		{"payload too large", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "custom", "payload": map[string]any{"x": big}}, 400},
		{"payload not an object", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "custom", "payload": []int{1}}, 422},
		{"annotation without ref", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "wandb.annotation.score", "payload": map[string]any{"value": 1}}, 400},
		{"annotation ref of another name", withRef("wandb.annotation.score", "annotation_ref", "weave:///acme/p/object/other:abc", map[string]any{"value": 1}), 400},
		{"annotation without value", withRef("wandb.annotation.score", "annotation_ref", "weave:///acme/p/object/score:abc", map[string]any{"v": 1}), 400},
		{"runnable op without call_ref", withRef("wandb.runnable.judge", "runnable_ref", "weave:///acme/p/op/judge:abc", map[string]any{"output": 1}), 400},
		{"runnable_ref on a plain type", withRef("custom", "runnable_ref", "weave:///acme/p/op/judge:abc", map[string]any{}), 400},
		{"call_ref on a plain type", withRef("custom", "call_ref", "weave:///acme/p/call/x", map[string]any{}), 400},
		{"trigger_ref on a plain type", withRef("custom", "trigger_ref", "weave:///acme/p/object/t:abc", map[string]any{}), 400},
		{"scorer fields on a plain type", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "custom", "payload": map[string]any{}, "scorer_tags": []string{"x"}}, 400},
		{"scorer_tags not strings", scored("scorer_tags", []int{1}), 422},
		{"scorer_ratings not numbers", scored("scorer_ratings", map[string]string{"a": "high"}), 422},
		{"scorer_tag_reasons not text", scored("scorer_tag_reasons", map[string]int{"a": 1}), 422},
		{"span_agent_name not text", scored("span_agent_name", 7), 422},
		{"weave_ref of another project", map[string]any{"project_id": "acme/p", "weave_ref": "weave:///acme/q/call/c1", "feedback_type": "custom", "payload": map[string]any{}}, 400},
		{"weave_ref not a ref", map[string]any{"project_id": "acme/p", "weave_ref": "call c1", "feedback_type": "custom", "payload": map[string]any{}}, 400},
		{"missing feedback_type", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "payload": map[string]any{}}, 422},
		{"wrong type", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": 5, "payload": map[string]any{}}, 422},
		{"unknown field", map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "custom", "payload": map[string]any{}, "colour": "red"}, 422},
		{"other entity", map[string]any{"project_id": "other/p", "weave_ref": "weave:///other/p/call/c1", "feedback_type": "custom", "payload": map[string]any{}}, 403},
		{"not JSON", "{", 422},
		{"invalid UTF-8 in payload", "{\"project_id\":\"acme/p\",\"weave_ref\":\"" + noteCallRef + "\",\"feedback_type\":\"custom\",\"payload\":{\"a\":\"\xff\"}}", 422},
		{"invalid UTF-8 in feedback_type", "{\"project_id\":\"acme/p\",\"weave_ref\":\"" + noteCallRef + "\",\"feedback_type\":\"c\xff\",\"payload\":{}}", 422},
	}
	for _, c := range cases {
		if code, out := e.postJSON(t, "/feedback/create", c.body); code != c.want {
			t.Errorf("%s: status %d (%v), want %d", c.name, code, out, c.want)
		}
	}
	if res := e.expectStatus(t, "/feedback/query", `{"project_id":"acme/p"}`, 200); res["total_count"] != 0.0 {
		t.Fatalf("rejected feedback was stored: %v", res)
	}
}

func TestFeedbackNewerClientDefaultsAccepted(t *testing.T) {
	e := newStoreEnv(t)
	body := noteReq("fine")
	for k, v := range map[string]any{"id": nil, "creator": nil, "queue_id": nil, "wb_user_id": "spoofed", "scorer_tags": []string{},
		"scorer_ratings": map[string]any{}, "span_status_code": "UNSET", "span_trace_id": ""} {
		body[k] = v
	}
	out := e.expectStatus(t, "/feedback/create", body, http.StatusOK)
	if out["wb_user_id"] != "user-1" {
		t.Fatalf("wb_user_id %v, want the caller's", out["wb_user_id"])
	}
}

// seedNotes stores two notes and a custom row with a client-chosen id
// through /feedback/batch/create and returns the answer items.
func seedNotes(t *testing.T, e *storeEnv) []any {
	t.Helper()
	batch := []any{noteReq("first"), noteReq("second"), map[string]any{"id": "mine", "project_id": "acme/p", "weave_ref": noteCallRef,
		"feedback_type": "custom", "payload": map[string]any{"score": 3}}}
	res := e.expectStatus(t, "/feedback/batch/create", map[string]any{"batch": batch}, http.StatusOK)
	items := res["res"].([]any)
	if len(items) != 3 || items[2].(map[string]any)["id"] != "mine" {
		t.Fatalf("batch answer %v", res)
	}
	return items
}

func TestFeedbackBatchAndQuery(t *testing.T) {
	e := newStoreEnv(t)
	seedNotes(t, e)
	bad := e.expectStatus(t, "/feedback/batch/create", map[string]any{"batch": []any{noteReq("ok"), noteReq("")}}, http.StatusBadRequest)
	if !strings.Contains(fmt.Sprint(bad["reason"]), "batch[1]") {
		t.Fatalf("batch error %v does not name the item", bad)
	}
	q := e.expectStatus(t, "/feedback/query", `{"project_id":"acme/p","fields":["id","payload.note"],
		"query":{"$expr":{"$eq":[{"$getField":"feedback_type"},{"$literal":"wandb.note.1"}]}},
		"sort_by":[{"field":"payload.note","direction":"desc"}],"limit":1,"offset":0}`, http.StatusOK)
	rows := q["result"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["payload.note"] != "second" || q["total_count"] != 2.0 {
		t.Fatalf("query answer %v", q)
	}
	count := e.expectStatus(t, "/feedback/query", `{"project_id":"acme/p","fields":["count(*)"]}`, http.StatusOK)
	if fmt.Sprint(count["result"]) != "[map[count(*):3]]" {
		t.Fatalf("count(*) answer %v", count)
	}
	for _, body := range []string{`{"project_id":"acme/p","limit":-1}`, `{"project_id":"acme/p","offset":-2}`,
		`{"project_id":"acme/p","fields":["nope"]}`} {
		e.expectStatus(t, "/feedback/query", body, http.StatusBadRequest)
	}
	// What the reference's request schema refuses is a 422.
	for _, body := range []string{`{"project_id":"acme/p","sort_by":[{"field":"id","direction":"sideways"}]}`,
		`{"project_id":"acme/p","query":{"$expr":{"$bogus":[]}}}`, `{"project_id":"acme/p","limit":"ten"}`} {
		e.expectStatus(t, "/feedback/query", body, http.StatusUnprocessableEntity)
	}
}

func TestFeedbackPurgeAndReplace(t *testing.T) {
	e := newStoreEnv(t)
	items := seedNotes(t, e)
	purgeBad := e.expectStatus(t, "/feedback/purge", `{"project_id":"acme/p","query":{"$expr":{"$eq":[{"$getField":"feedback_type"},{"$literal":"custom"}]}}}`, http.StatusBadRequest)
	if !strings.Contains(fmt.Sprint(purgeBad["reason"]), "Can only purge feedback by specifying one or more feedback ids") {
		t.Fatalf("purge by type answer %v", purgeBad)
	}
	e.expectStatus(t, "/feedback/purge", `{"project_id":"acme/p"}`, http.StatusUnprocessableEntity)
	e.expectStatus(t, "/feedback/purge", `{"project_id":"acme/p","query":{"$expr":{"$eq":[{"$getField":"id"},{"$literal":"mine"}]}}}`, http.StatusOK)

	first := items[0].(map[string]any)["id"].(string)
	repl := noteReq("rewritten")
	repl["feedback_id"] = first
	if out := e.expectStatus(t, "/feedback/replace", repl, http.StatusOK); out["id"] == first {
		t.Fatalf("replace kept the old id %s", first)
	}
	after := e.expectStatus(t, "/feedback/query", `{"project_id":"acme/p","fields":["payload.note"],"sort_by":[{"field":"payload.note","direction":"asc"}]}`, http.StatusOK)
	if fmt.Sprint(after["result"]) != "[map[payload.note:rewritten] map[payload.note:second]]" {
		t.Fatalf("after purge and replace: %v", after["result"])
	}
	e.expectStatus(t, "/feedback/replace", noteReq("no id"), http.StatusUnprocessableEntity)
}

func BenchmarkFeedbackQuery(b *testing.B) {
	e := newStoreEnv(b)
	const rows = 10000
	for start := 0; start < rows; start += 1000 {
		batch := make([]any, 1000)
		for i := range batch {
			batch[i] = map[string]any{"project_id": "acme/p", "weave_ref": fmt.Sprintf("weave:///acme/p/call/c%d", (start+i)%500),
				"feedback_type": "custom", "payload": map[string]any{"score": (start + i) % 97, "label": fmt.Sprintf("l%d", i%7)}}
		}
		e.expectStatus(b, "/feedback/batch/create", map[string]any{"batch": batch}, http.StatusOK)
	}
	body := `{"project_id":"acme/p","fields":["id","payload.score","created_at"],
		"query":{"$expr":{"$and":[{"$gt":[{"$getField":"payload.score"},{"$literal":50}]},{"$eq":[{"$getField":"payload.label"},{"$literal":"l3"}]}]}},
		"sort_by":[{"field":"payload.score","direction":"desc"},{"field":"id","direction":"asc"}],"limit":100}`
	b.ResetTimer()
	for range b.N {
		if code, out := e.postJSON(b, "/feedback/query", body); code != http.StatusOK || len(out["result"].([]any)) != 100 {
			b.Fatalf("query: %d %v", code, out["total_count"])
		}
	}
}

// scored is runnable feedback that sets one scorer or span field.
func scored(field string, v any) map[string]any {
	return map[string]any{"project_id": "acme/p", "weave_ref": noteCallRef, "feedback_type": "wandb.runnable.judge",
		"runnable_ref": "weave:///acme/p/object/judge:abc", "payload": map[string]any{"output": 1}, field: v}
}

// TestFeedbackScorerFieldsRoundTrip: the scorer and span fields a client
// sends come back from /feedback/query; unset ones (including those sent
// with their defaults) are left out unless fields names them.
func TestFeedbackScorerFieldsRoundTrip(t *testing.T) {
	e := newStoreEnv(t)
	req := scored("scorer_tags", []string{"safety-risk"})
	req["scorer_rating_confidences"] = map[string]float64{"_rating_": 0.9}
	req["span_agent_name"], req["span_status_code"], req["span_trace_id"] = "bot", "UNSET", ""
	created := e.expectStatus(t, "/feedback/create", req, http.StatusOK)
	set := map[string]any{"scorer_tags": []any{"safety-risk"}, "scorer_rating_confidences": map[string]any{"_rating_": 0.9},
		"span_agent_name": "bot"}
	tests := []struct {
		name, query string
		want        map[string]any // nil: must be absent
	}{
		{"all columns", `{"project_id":"acme/p"}`, map[string]any{
			"scorer_ratings": nil, "span_status_code": nil, "span_trace_id": nil, "scorer_trace_id": nil}},
		{"named", `{"project_id":"acme/p","fields":["id","scorer_tags","scorer_rating_confidences","span_agent_name","scorer_ratings","span_status_code"]}`,
			map[string]any{"scorer_ratings": map[string]any{}, "span_status_code": "UNSET", "span_trace_id": nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := e.expectStatus(t, "/feedback/query", tc.query, http.StatusOK)
			rows := got["result"].([]any)
			if len(rows) != 1 {
				t.Fatalf("rows %v", rows)
			}
			row := rows[0].(map[string]any)
			if row["id"] != created["id"] {
				t.Errorf("id %v, want %v", row["id"], created["id"])
			}
			want := maps.Clone(set)
			maps.Copy(want, tc.want)
			for k, v := range want {
				got, ok := row[k]
				if ok != (v != nil) || fmt.Sprint(got) != fmt.Sprint(v) && v != nil {
					t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
				}
			}
		})
	}
}

// sdkFeedbackFields are the fields of the Weave Python SDK's Feedback
// model, which refuses any other: up to 0.52.29, and since (the newer
// scorer and span fields added).
var sdkFeedbackFields = map[string][]string{
	"0.52.29": {"id", "project_id", "weave_ref", "creator", "feedback_type", "payload", "annotation_ref",
		"runnable_ref", "call_ref", "trigger_ref", "queue_id", "wb_user_id", "created_at"},
	"current": {"id", "project_id", "weave_ref", "creator", "feedback_type", "payload", "annotation_ref",
		"runnable_ref", "call_ref", "trigger_ref", "queue_id", "wb_user_id", "created_at",
		"scorer_tags", "scorer_tag_reasons", "scorer_tag_confidences", "scorer_ratings", "scorer_rating_reasons",
		"scorer_rating_confidences", "scorer_trace_id", "span_agent_name", "span_agent_version",
		"span_conversation_id", "span_status_code", "span_trace_id"},
}

// TestFeedbackRowsFitEverySDKModel: the rows an SDK reads with
// call.feedback or client.get_feedback() (no fields named) carry only
// fields its Feedback model knows, for every SDK, as long as the newer
// fields are unset; the newest model knows every field a row can carry.
func TestFeedbackRowsFitEverySDKModel(t *testing.T) {
	e := newStoreEnv(t)
	e.expectStatus(t, "/feedback/create", noteReq("plain"), http.StatusOK)
	e.expectStatus(t, "/feedback/create", scored("span_status_code", "UNSET"), http.StatusOK)
	judged := scored("scorer_tags", []string{"x"})
	judged["span_agent_name"] = "bot"
	e.expectStatus(t, "/feedback/create", judged, http.StatusOK)
	got := e.expectStatus(t, "/feedback/query", `{"project_id":"acme/p"}`, http.StatusOK)
	rows := got["result"].([]any)
	if len(rows) != 3 {
		t.Fatalf("rows %v", rows)
	}
	for i, r := range rows {
		_, newer := r.(map[string]any)["scorer_tags"]
		for version, fields := range sdkFeedbackFields {
			if version == "0.52.29" && newer {
				continue // sets newer fields: only newer SDKs read it
			}
			for k := range r.(map[string]any) {
				if !slices.Contains(fields, k) {
					t.Errorf("row %d carries %q, which the %s SDK's Feedback model refuses", i, k, version)
				}
			}
		}
	}
	if len(storage.FeedbackColumns) != len(sdkFeedbackFields["current"]) {
		t.Errorf("a row can carry %d fields; the current SDK model knows %d", len(storage.FeedbackColumns), len(sdkFeedbackFields["current"]))
	}
}
