package conformance

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// callStore is what the calls cases need from a backend.
type callStore interface {
	storage.CallWriter
	storage.CallReader
}

// runCalls runs every calls case against stores made by newStore.
func runCalls(t *testing.T, newStore func(t *testing.T) callStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s callStore)
	}{
		{"EndBeforeStartMerges", testEndBeforeStartMerges},
		{"StartOnlyIsRunningAndVisible", testStartOnlyVisible},
		{"EndOnlyIsInvisible", testEndOnlyInvisible},
		{"LastWriteWinsPerSide", testLastWriteWinsPerSide},
		{"DefaultOrderAndPaging", testDefaultOrderAndPaging},
		{"ProjectIsolation", testProjectIsolation},
		{"UpdateDisplayName", testUpdateDisplayName},
		{"UpdateBeforeStartIsApplied", testUpdateBeforeStart},
		{"DeleteBeforeStartIsApplied", testDeleteBeforeStart},
		{"DeleteCascadesAndHides", testDeleteCascades},
		{"DeleteCountsOnlyCallsDeleted", testDeleteCountsOnlyDeleted},
		{"DeleteSeesSameBatch", testDeleteSeesSameBatch},
		{"CountWithLimit", testCountWithLimit},
		{"FilterByOpAndTrace", testFilterByOpAndTrace},
		{"KeysetPagingByStartAndID", testKeysetPaging},
		{"EveryFieldRoundTrips", testEveryFieldRoundTrips},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

var base = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func start(project, id, trace, parent, op string, at time.Time) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
		ProjectID: project, ID: id, TraceID: trace, ParentID: parent, OpName: op, StartedAt: at,
		Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{"x":1}`)}}}
}

func end(project, id string, at time.Time, output string) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{
		ProjectID: project, ID: id, EndedAt: &at, Output: json.RawMessage(output), Summary: json.RawMessage(`{}`)}}}
}

// write hands ops to the store as the pipeline does: parts of one call
// merged first (storage.CallWriter's contract), results mapped back.
func write(t *testing.T, s storage.CallWriter, ops ...storage.CallOp) []storage.CallOpResult {
	t.Helper()
	merged, index := storage.MergeOps(ops)
	res, err := s.WriteCallOps(context.Background(), merged)
	if err != nil {
		t.Fatalf("WriteCallOps: %v", err)
	}
	out := make([]storage.CallOpResult, len(ops))
	for i, j := range index {
		out[i] = res[j]
	}
	return out
}

func query(t *testing.T, s callStore, q storage.CallsQuery) []storage.StoredCall {
	t.Helper()
	var out []storage.StoredCall
	for c, err := range s.QueryCalls(context.Background(), q) {
		if err != nil {
			t.Fatalf("QueryCalls: %v", err)
		}
		out = append(out, c)
	}
	return out
}

func ids(calls []storage.StoredCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.ID
	}
	return out
}

func wantIDs(t *testing.T, got []storage.StoredCall, want ...string) {
	t.Helper()
	if g := ids(got); !slices.Equal(g, want) {
		t.Fatalf("ids = %v, want %v", g, want)
	}
}

func testEndBeforeStartMerges(t *testing.T, s callStore) {
	write(t, s, end("e/p", "a", base.Add(time.Second), `"out"`))
	write(t, s, start("e/p", "a", "t", "", "op", base))
	got := query(t, s, storage.CallsQuery{ProjectID: "e/p"})
	wantIDs(t, got, "a")
	c := got[0]
	if c.EndedAt == nil || !c.EndedAt.Equal(base.Add(time.Second)) || string(c.Output) != `"out"` || c.OpName != "op" {
		t.Fatalf("merged call = %+v", c.Call)
	}
	if !c.StartedAt.Equal(base) || c.TraceID != "t" || string(c.Inputs) != `{"x":1}` {
		t.Fatalf("start side lost: %+v", c.Call)
	}
}

func testStartOnlyVisible(t *testing.T, s callStore) {
	write(t, s, start("e/p", "a", "t", "", "op", base))
	got := query(t, s, storage.CallsQuery{ProjectID: "e/p"})
	wantIDs(t, got, "a")
	if got[0].EndedAt != nil {
		t.Fatalf("running call has ended_at %v", got[0].EndedAt)
	}
}

func testEndOnlyInvisible(t *testing.T, s callStore) {
	write(t, s, end("e/p", "a", base, `1`))
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p"}))
}

func testLastWriteWinsPerSide(t *testing.T, s callStore) {
	write(t, s, start("e/p", "a", "t", "", "op1", base), end("e/p", "a", base.Add(time.Second), `1`))
	write(t, s, start("e/p", "a", "t", "", "op2", base))
	got := query(t, s, storage.CallsQuery{ProjectID: "e/p"})
	wantIDs(t, got, "a")
	if got[0].OpName != "op2" || string(got[0].Output) != "1" {
		t.Fatalf("after re-sent start: op=%q output=%s", got[0].OpName, got[0].Output)
	}
}

func testDefaultOrderAndPaging(t *testing.T, s callStore) {
	write(t, s, start("e/p", "c", "t", "", "op", base.Add(2*time.Second)),
		start("e/p", "a", "t", "", "op", base), start("e/p", "b", "t", "", "op", base))
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p"}), "a", "b", "c")
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p", Limit: 1, Offset: 1}), "b")
	desc := []storage.SortBy{{Field: "started_at", Direction: "desc"}}
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p", SortBy: desc}), "c", "b", "a")
}

func testProjectIsolation(t *testing.T, s callStore) {
	write(t, s, start("e/p", "a", "t", "", "op", base), start("other/p", "b", "t", "", "op", base))
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p"}), "a")
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: []string{"b"}}}))
	res := write(t, s, storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"b"}, At: base}})
	if res[0].NumDeleted != 0 {
		t.Fatalf("num_deleted = %d for another project's call, want 0", res[0].NumDeleted)
	}
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "other/p"}), "b")
}

func testUpdateDisplayName(t *testing.T, s callStore) {
	write(t, s, start("e/p", "a", "t", "", "op", base))
	write(t, s, storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "a", DisplayName: "renamed"}})
	if got := query(t, s, storage.CallsQuery{ProjectID: "e/p"}); got[0].DisplayName != "renamed" {
		t.Fatalf("display_name = %q", got[0].DisplayName)
	}
	write(t, s, storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "a", DisplayName: ""}})
	if got := query(t, s, storage.CallsQuery{ProjectID: "e/p"}); got[0].DisplayName != "" {
		t.Fatalf("cleared display_name = %q", got[0].DisplayName)
	}
}

func testDeleteCascades(t *testing.T, s callStore) {
	write(t, s, start("e/p", "root", "t", "", "op", base), start("e/p", "kid", "t", "root", "op", base),
		start("e/p", "grandkid", "t", "kid", "op", base), start("e/p", "other", "t2", "", "op", base))
	res := write(t, s, storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"root"}, At: base}})
	if res[0].NumDeleted != 3 {
		t.Fatalf("num_deleted = %d, want 3", res[0].NumDeleted)
	}
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p"}), "other")
	st, err := s.CountCalls(context.Background(), storage.CallsQuery{ProjectID: "e/p"}, 0)
	if err != nil || st.Count != 1 {
		t.Fatalf("count after delete = %d, %v", st.Count, err)
	}
}

func testCountWithLimit(t *testing.T, s callStore) {
	for _, id := range []string{"a", "b", "c", "d"} {
		write(t, s, start("e/p", id, "t", "", "op", base))
	}
	for _, tc := range []struct{ limit, want int64 }{{0, 4}, {2, 2}, {10, 4}} {
		st, err := s.CountCalls(context.Background(), storage.CallsQuery{ProjectID: "e/p"}, tc.limit)
		if err != nil || st.Count != tc.want {
			t.Fatalf("count(limit=%d) = %d, %v; want %d", tc.limit, st.Count, err, tc.want)
		}
	}
}

func testFilterByOpAndTrace(t *testing.T, s callStore) {
	write(t, s, start("e/p", "a", "t1", "", "weave:///e/p/op/add:v1", base),
		start("e/p", "b", "t1", "a", "weave:///e/p/op/add:v2", base.Add(time.Second)),
		start("e/p", "c", "t2", "", "weave:///e/p/op/mul:v1", base.Add(2*time.Second)))
	q := func(f storage.CallsFilter) storage.CallsQuery { return storage.CallsQuery{ProjectID: "e/p", Filter: f} }
	wantIDs(t, query(t, s, q(storage.CallsFilter{OpNames: []string{"weave:///e/p/op/add:*"}})), "a", "b")
	wantIDs(t, query(t, s, q(storage.CallsFilter{OpNames: []string{"weave:///e/p/op/add:v2"}})), "b")
	wantIDs(t, query(t, s, q(storage.CallsFilter{TraceIDs: []string{"t2"}})), "c")
	wantIDs(t, query(t, s, q(storage.CallsFilter{TraceRootsOnly: true})), "a", "c")
	wantIDs(t, query(t, s, q(storage.CallsFilter{ParentIDs: []string{"a"}})), "b")
	wantIDs(t, query(t, s, q(storage.CallsFilter{ThreadIDs: []string{}})))
}
