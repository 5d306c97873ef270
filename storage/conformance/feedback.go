package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// runFeedback runs every feedback case against stores made by newStore.
func runFeedback(t *testing.T, newStore func(t *testing.T) storage.FeedbackStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.FeedbackStore)
	}{
		{"AllColumnsRoundTrip", testFeedbackAllColumns},
		{"FieldsPayloadPathsAndCount", testFeedbackFields},
		{"QueryColumnsAndPayload", testFeedbackQuery},
		{"SortByJSONPathAndPaging", testFeedbackSortAndPaging},
		{"PurgeAndReplace", testFeedbackPurgeReplace},
		{"ForRefs", testFeedbackForRefs},
		{"ScorerAndSpanFields", testFeedbackScorerSpanFields},
		{"BadQueriesRefused", testFeedbackBadQueries},
		{"ProjectIsolation", testFeedbackIsolation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func fb(project, id, ref, typ, payload string, at time.Time) storage.Feedback {
	return storage.Feedback{ID: id, ProjectID: project, WeaveRef: ref, WBUserID: "u1", FeedbackType: typ,
		Payload: json.RawMessage(payload), CreatedAt: at}
}

func callRef(project, id string) string { return "weave:///" + project + "/call/" + id }

func createFeedback(t *testing.T, s storage.FeedbackStore, rows ...storage.Feedback) {
	t.Helper()
	if err := s.CreateFeedback(context.Background(), rows); err != nil {
		t.Fatalf("CreateFeedback: %v", err)
	}
}

// seedFeedback stores four rows in e/p with scores 10, 2, none and 7.
func seedFeedback(t *testing.T, s storage.FeedbackStore) {
	createFeedback(t, s,
		fb("e/p", "f1", callRef("e/p", "c1"), "wandb.note.1", `{"note":"Great answer","score":10}`, base),
		fb("e/p", "f2", callRef("e/p", "c1"), "custom", `{"score":2,"tags":["a"]}`, base.Add(time.Minute)),
		fb("e/p", "f3", callRef("e/p", "c2"), "wandb.note.1", `{"note":"needs work"}`, base.Add(2*time.Minute)),
		fb("e/p", "f4", callRef("e/p", "c2"), "custom", `{"score":7.0}`, base.Add(3*time.Minute)))
}

func queryFeedback(t *testing.T, s storage.FeedbackStore, q storage.FeedbackQuery) ([]map[string]any, int64) {
	t.Helper()
	res, err := s.QueryFeedback(context.Background(), q)
	if err != nil {
		t.Fatalf("QueryFeedback(%+v): %v", q, err)
	}
	out := make([]map[string]any, len(res.Result))
	for i, raw := range res.Result {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatalf("row %s: %v", raw, err)
		}
	}
	return out, res.TotalCount
}

func column(rows []map[string]any, key string) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r[key]
	}
	return out
}

func testFeedbackAllColumns(t *testing.T, s storage.FeedbackStore) {
	creator, runnable := "alice", "weave:///e/p/object/correct:abc"
	row := fb("e/p", "f1", callRef("e/p", "c1"), "wandb.runnable.correct", `{"output":true}`, base)
	row.Creator, row.RunnableRef = &creator, &runnable
	createFeedback(t, s, row)
	rows, total := queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p"})
	if total != 1 || len(rows) != 1 {
		t.Fatalf("got %d rows, total %d; want 1", len(rows), total)
	}
	// Exactly the fields of the Weave SDK's Feedback model up to 0.52.29,
	// which refuses any other: the newer scorer and span fields, unset
	// here, are left out unless asked for.
	want := map[string]any{"id": "f1", "project_id": "e/p", "weave_ref": callRef("e/p", "c1"), "wb_user_id": "u1",
		"creator": "alice", "created_at": "2025-03-04T05:06:07Z", "feedback_type": "wandb.runnable.correct",
		"payload": map[string]any{"output": true}, "annotation_ref": nil, "runnable_ref": runnable,
		"call_ref": nil, "trigger_ref": nil, "queue_id": nil}
	if !reflect.DeepEqual(rows[0], want) {
		t.Fatalf("row\n got %v\nwant %v", rows[0], want)
	}
	// Named, every column comes back, unset ones with their defaults.
	rows, _ = queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p", Fields: slices.Clone(storage.FeedbackColumns)})
	for k, v := range unsetScorerSpanFields() {
		want[k] = v
	}
	if len(rows) != 1 || !reflect.DeepEqual(rows[0], want) {
		t.Fatalf("rows with every column named\n got %v\nwant %v", rows, want)
	}
}

func testFeedbackFields(t *testing.T, s storage.FeedbackStore) {
	seedFeedback(t, s)
	rows, _ := queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p", Fields: []string{"id", "payload.score", "payload.tags"},
		SortBy: []storage.SortBy{{Field: "id", Direction: "asc"}}})
	want := []map[string]any{
		{"id": "f1", "payload.score": "10", "payload.tags": ""},
		{"id": "f2", "payload.score": "2", "payload.tags": `["a"]`},
		{"id": "f3", "payload.score": "", "payload.tags": ""},
		{"id": "f4", "payload.score": "7", "payload.tags": ""},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("projected rows\n got %v\nwant %v", rows, want)
	}
	rows, total := queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p", Fields: []string{"count(*)"}})
	if len(rows) != 1 || rows[0]["count(*)"] != 4.0 || total != 4 {
		t.Fatalf("count(*) gave %v (total %d), want one row of 4", rows, total)
	}
}

func testFeedbackQuery(t *testing.T, s storage.FeedbackStore) {
	seedFeedback(t, s)
	cases := []struct {
		name, where string
		want        []any
	}{
		{"column eq", `{"$eq":[{"$getField":"feedback_type"},{"$literal":"wandb.note.1"}]}`, []any{"f1", "f3"}},
		{"payload int cast", `{"$gt":[{"$getField":"payload.score"},{"$literal":5}]}`, []any{"f1", "f4"}},
		{"payload string", `{"$eq":[{"$getField":"payload.score"},{"$literal":"2"}]}`, []any{"f2"}},
		{"contains ci", `{"$contains":{"input":{"$getField":"payload.note"},"substr":{"$literal":"GREAT"},"case_insensitive":true}}`, []any{"f1"}},
		{"created_at iso", `{"$gte":[{"$getField":"created_at"},{"$literal":"2025-03-04T05:08:07Z"}]}`, []any{"f3", "f4"}},
		{"created_at unix", `{"$lt":[{"$getField":"created_at"},{"$literal":1741064887}]}`, []any{"f1", "f2"}},
		{"in and not", `{"$and":[{"$in":[{"$getField":"id"},[{"$literal":"f1"},{"$literal":"f2"},{"$literal":"f3"}]]},{"$not":[{"$eq":[{"$getField":"id"},{"$literal":"f2"}]}]}]}`, []any{"f1", "f3"}},
		{"null creator", `{"$eq":[{"$getField":"creator"},{"$literal":null}]}`, []any{"f1", "f2", "f3", "f4"}},
		{"convert exists", `{"$eq":[{"$convert":{"input":{"$getField":"payload.note"},"to":"exists"}},{"$literal":true}]}`, []any{"f1", "f3"}},
		{"convert double", `{"$gte":[{"$convert":{"input":{"$getField":"payload.score"},"to":"double"}},{"$literal":7}]}`, []any{"f1", "f4"}},
	}
	for _, c := range cases {
		rows, total := queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p", Fields: []string{"id"},
			Where: json.RawMessage(`{"$expr":` + c.where + `}`), SortBy: []storage.SortBy{{Field: "id", Direction: "asc"}}})
		if got := column(rows, "id"); !reflect.DeepEqual(got, c.want) || total != int64(len(c.want)) {
			t.Errorf("%s: got %v (total %d), want %v", c.name, got, total, c.want)
		}
	}
}

func testFeedbackSortAndPaging(t *testing.T, s storage.FeedbackStore) {
	seedFeedback(t, s)
	q := storage.FeedbackQuery{ProjectID: "e/p", Fields: []string{"id"}, SortBy: []storage.SortBy{{Field: "payload.score", Direction: "desc"}}}
	rows, _ := queryFeedback(t, s, q)
	// Numeric order (10 > 7 > 2, not text order), rows without a score last.
	if got := column(rows, "id"); !reflect.DeepEqual(got, []any{"f1", "f4", "f2", "f3"}) {
		t.Fatalf("sorted by payload.score desc: %v", got)
	}
	q.SortBy[0].Direction = "asc"
	limit := int64(2)
	q.Limit, q.Offset = &limit, 1
	rows, total := queryFeedback(t, s, q)
	if got := column(rows, "id"); !reflect.DeepEqual(got, []any{"f4", "f1"}) || total != 4 {
		t.Fatalf("asc, limit 2 offset 1: %v total %d; want [f4 f1] total 4", got, total)
	}
	q.SortBy = []storage.SortBy{{Field: "created_at", Direction: "DESC"}}
	rows, _ = queryFeedback(t, s, q)
	if got := column(rows, "id"); !reflect.DeepEqual(got, []any{"f3", "f2"}) {
		t.Fatalf("created_at desc, limit 2 offset 1: %v", got)
	}
}

func testFeedbackPurgeReplace(t *testing.T, s storage.FeedbackStore) {
	seedFeedback(t, s)
	ctx := context.Background()
	if err := s.PurgeFeedback(ctx, "e/p", []string{"f1", "f3", "nope"}); err != nil {
		t.Fatal(err)
	}
	repl := fb("e/p", "f9", callRef("e/p", "c1"), "custom", `{"score":1}`, base.Add(time.Hour))
	if err := s.ReplaceFeedback(ctx, "e/p", "f2", repl); err != nil {
		t.Fatal(err)
	}
	rows, total := queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p", Fields: []string{"id"},
		SortBy: []storage.SortBy{{Field: "id", Direction: "asc"}}})
	if got := column(rows, "id"); !reflect.DeepEqual(got, []any{"f4", "f9"}) || total != 2 {
		t.Fatalf("after purge and replace: %v total %d, want [f4 f9]", got, total)
	}
}

func testFeedbackForRefs(t *testing.T, s storage.FeedbackStore) {
	seedFeedback(t, s)
	got, err := s.FeedbackForRefs(context.Background(), "e/p", []string{callRef("e/p", "c1"), callRef("e/p", "c9")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("feedback for %d refs, want only c1's", len(got))
	}
	var list []map[string]any
	if err := json.Unmarshal(got[callRef("e/p", "c1")], &list); err != nil {
		t.Fatal(err)
	}
	if ids := column(list, "id"); !reflect.DeepEqual(ids, []any{"f1", "f2"}) {
		t.Fatalf("c1 feedback ids %v, want [f1 f2] oldest first", ids)
	}
	for _, k := range []string{"feedback_type", "weave_ref", "payload", "creator", "created_at", "wb_user_id",
		"runnable_ref", "call_ref", "trigger_ref", "annotation_ref"} {
		if _, ok := list[0][k]; !ok {
			t.Errorf("summary.weave.feedback entry lacks %s: %v", k, list[0])
		}
	}
}

func testFeedbackBadQueries(t *testing.T, s storage.FeedbackStore) {
	seedFeedback(t, s)
	neg := int64(-1)
	bad := []storage.FeedbackQuery{
		{ProjectID: "e/p", Fields: []string{"nope"}},
		{ProjectID: "e/p", Fields: []string{"count(*)", "id"}},
		{ProjectID: "e/p", Where: json.RawMessage(`{"$expr":{"$eq":[{"$getField":"nope"},{"$literal":1}]}}`)},
		{ProjectID: "e/p", Where: json.RawMessage(`{"$expr":{"$eq":[1,2]}}`)},
		{ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "nope", Direction: "asc"}}},
		{ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "id", Direction: "up"}}},
		{ProjectID: "e/p", Limit: &neg},
		{ProjectID: "e/p", Offset: -1},
	}
	for i, q := range bad {
		if _, err := s.QueryFeedback(context.Background(), q); !errors.Is(err, storage.ErrInvalidArgument) {
			t.Errorf("bad query %d (%+v): err %v, want ErrInvalidArgument", i, q, err)
		}
	}
}

func testFeedbackIsolation(t *testing.T, s storage.FeedbackStore) {
	seedFeedback(t, s)
	ctx := context.Background()
	rows, total := queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "b/p"})
	if len(rows) != 0 || total != 0 {
		t.Fatalf("project B sees %d of A's rows (total %d)", len(rows), total)
	}
	rows, _ = queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "b/p", Fields: []string{"count(*)"}})
	if rows[0]["count(*)"] != 0.0 {
		t.Fatalf("project B counts A's rows: %v", rows)
	}
	if err := s.PurgeFeedback(ctx, "b/p", []string{"f1", "f2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceFeedback(ctx, "b/p", "f3", fb("b/p", "g1", callRef("b/p", "c1"), "custom", `{}`, base)); err != nil {
		t.Fatal(err)
	}
	got, err := s.FeedbackForRefs(ctx, "b/p", []string{callRef("e/p", "c1")})
	if err != nil || len(got) != 0 {
		t.Fatalf("project B read A's feedback by ref: %v, %v", got, err)
	}
	if _, total := queryFeedback(t, s, storage.FeedbackQuery{ProjectID: "e/p"}); total != 4 {
		t.Fatalf("B's purge and replace changed A: %d rows left, want 4", total)
	}
	err = s.ReplaceFeedback(ctx, "b/p", "x", fb("e/p", "g2", callRef("e/p", "c1"), "custom", `{}`, base))
	if !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("a replacement row of another project: err %v, want ErrInvalidArgument", err)
	}
}
