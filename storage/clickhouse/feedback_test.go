package clickhouse

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

var fbAt = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func feedbackRow(id, call, payload string) storage.Feedback {
	return storage.Feedback{ID: id, ProjectID: "e/p", WeaveRef: "weave:///e/p/call/" + call, WBUserID: "u",
		FeedbackType: "custom", Payload: json.RawMessage(payload), CreatedAt: fbAt}
}

// plainFeedback reads the table without FINAL, as the calls query
// generator joins it: "id payload" per row, in id order.
func plainFeedback(t *testing.T, s *Store) []string {
	t.Helper()
	out, err := s.stringColumn(context.Background(), "test", "SELECT id || ' ' || payload FROM feedback ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFeedbackRewritesLeaveOneRow(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	steps := []struct {
		name string
		run  func() error
		want []string
	}{
		{"create", func() error { return s.CreateFeedback(ctx, []storage.Feedback{feedbackRow("f1", "c1", `{"n":1}`)}) }, []string{`f1 {"n":1}`}},
		{"create the same id on another call", func() error {
			return s.CreateFeedback(ctx, []storage.Feedback{feedbackRow("f1", "c2", `{"n":2}`), feedbackRow("f2", "c1", `{"n":3}`)})
		}, []string{`f1 {"n":2}`, `f2 {"n":3}`}},
		{"replace", func() error { return s.ReplaceFeedback(ctx, "e/p", "f1", feedbackRow("f3", "c2", `{"n":4}`)) },
			[]string{`f2 {"n":3}`, `f3 {"n":4}`}},
		{"replace in place", func() error { return s.ReplaceFeedback(ctx, "e/p", "f3", feedbackRow("f3", "c2", `{"n":5}`)) },
			[]string{`f2 {"n":3}`, `f3 {"n":5}`}},
		{"purge", func() error { return s.PurgeFeedback(ctx, "e/p", []string{"f2", "nope"}) }, []string{`f3 {"n":5}`}},
	}
	for _, st := range steps {
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := plainFeedback(t, s); !slices.Equal(got, st.want) {
			t.Fatalf("after %s: rows %q; want %q", st.name, got, st.want)
		}
	}
}

// TestFeedbackSeenByCallFilters runs the calls query generator's feedback
// join against this table.
func TestFeedbackSeenByCallFilters(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	var ops []storage.CallOp
	for _, id := range []string{"c1", "c2"} {
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "e/p", ID: id, TraceID: "t", OpName: "op", StartedAt: fbAt}}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	err := s.CreateFeedback(ctx, []storage.Feedback{feedbackRow("f1", "c1", `{"score":9}`), feedbackRow("f2", "c2", `{"score":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	matching := func() []string {
		q := storage.CallsQuery{ProjectID: "e/p", Where: mustParseQuery(t,
			`{"$expr":{"$gt":[{"$getField":"feedback.[custom].payload.score"},{"$literal":5}]}}`)}
		var ids []string
		for c, err := range s.QueryCalls(ctx, q) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
		}
		return ids
	}
	if got := matching(); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("calls with a score above 5: %v; want [c1]", got)
	}
	if err := s.ReplaceFeedback(ctx, "e/p", "f2", feedbackRow("f3", "c2", `{"score":7}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PurgeFeedback(ctx, "e/p", []string{"f1"}); err != nil {
		t.Fatal(err)
	}
	if got := matching(); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("after replace and purge: %v; want [c2]", got)
	}
}

// mustParseQuery parses a query document, as the query API does before it
// calls storage.
func mustParseQuery(t testing.TB, doc string) querylang.Expr {
	t.Helper()
	e, err := querylang.Parse(json.RawMessage(doc))
	if err != nil {
		t.Fatal(err)
	}
	return e
}
