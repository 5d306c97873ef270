package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

var t0 = time.Date(2025, 1, 30, 23, 0, 0, 123456789, time.UTC)

func startOp(project, id, parent string, at time.Time) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
		ProjectID: project, ID: id, TraceID: "t-" + project, ParentID: parent, OpName: "op", StartedAt: at,
		Attributes: json.RawMessage(`{"a": 1}`), Inputs: json.RawMessage(`{"x": "` + id + `"}`), InputRefs: []string{"weave:///e/p/object/o:1"}}}}
}

func endOp(project, id string, at time.Time) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{
		ProjectID: project, ID: id, EndedAt: &at, Output: json.RawMessage(`"done"`), Summary: json.RawMessage(`{}`)}}}
}

// mustWrite writes ops as the batch processor hands them to storage: parts
// of one call merged first (the CallWriter contract), results mapped back
// to each op.
func mustWrite(t *testing.T, s *Store, ops ...storage.CallOp) []storage.CallOpResult {
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

func readAll(t *testing.T, s *Store, project string) map[string]storage.Call {
	t.Helper()
	out := map[string]storage.Call{}
	for c, err := range s.QueryCalls(context.Background(), storage.CallsQuery{ProjectID: project}) {
		if err != nil {
			t.Fatalf("QueryCalls: %v", err)
		}
		if _, dup := out[c.ID]; dup {
			t.Fatalf("call %s read twice", c.ID)
		}
		out[c.ID] = c.Call
	}
	return out
}

// scalar runs a one-value query against the store's database.
func scalar[T any](t *testing.T, s *Store, sql string) T {
	t.Helper()
	var v T
	if err := s.conn.QueryRow(context.Background(), sql).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// currentVersions lists every call's current version, read with FINAL:
// what reads see, whatever background merges have collapsed so far. (A
// raw count() of a ReplacingMergeTree changes when a merge runs.)
func currentVersions(t *testing.T, s *Store) string {
	t.Helper()
	return scalar[string](t, s, "SELECT toString(groupArray((project_id, id, version))) FROM "+
		"(SELECT project_id, id, version FROM calls FINAL ORDER BY project_id, id)")
}

func TestRedeliveredBatchIsANoOp(t *testing.T) {
	s := openTestStore(t, Options{})
	batch := []storage.CallOp{
		startOp("e/p", "root", "", t0), startOp("e/p", "kid", "root", t0.Add(time.Second)),
		endOp("e/p", "kid", t0.Add(2*time.Second)), endOp("e/p", "root", t0.Add(3*time.Second)),
		startOp("e/p", "gone", "", t0), endOp("e/p", "orphan-end", t0),
		{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "root", DisplayName: "Root"}},
		{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"gone"}, At: t0.Add(time.Hour)}},
	}
	first := mustWrite(t, s, batch...)
	versions := currentVersions(t, s)
	want := readAll(t, s, "e/p")
	if len(want) != 2 || want["root"].DisplayName != "Root" || want["kid"].EndedAt == nil {
		t.Fatalf("after first delivery: %+v", want)
	}
	// A redelivered delete finds its call deleted already: it deletes,
	// and counts, nothing.
	wantAgain := append([]storage.CallOpResult(nil), first...)
	wantAgain[len(batch)-1].NumDeleted = 0
	for i := range 2 {
		again := mustWrite(t, s, batch...)
		if !reflect.DeepEqual(again, wantAgain) {
			t.Errorf("delivery %d results %+v; want %+v", i+2, again, wantAgain)
		}
		if got := readAll(t, s, "e/p"); !reflect.DeepEqual(got, want) {
			t.Fatalf("delivery %d changed the calls:\n got %+v\nwant %+v", i+2, got, want)
		}
		// Nothing new was written: no call has a newer version.
		if got := currentVersions(t, s); got != versions {
			t.Fatalf("delivery %d wrote new versions:\n got %s\nwant %s", i+2, got, versions)
		}
	}
	if n := scalar[uint64](t, s, "SELECT count() FROM calls FINAL"); n != 4 {
		t.Errorf("%d stored calls; want 4 (root, kid, gone, orphan-end)", n)
	}
}

func TestSameOpsTwiceInOneBatch(t *testing.T) {
	s := openTestStore(t, Options{})
	ops := []storage.CallOp{startOp("e/p", "a", "", t0), endOp("e/p", "a", t0.Add(time.Second))}
	mustWrite(t, s, append(ops, ops...)...)
	got := readAll(t, s, "e/p")
	if len(got) != 1 || got["a"].EndedAt == nil || got["a"].OpName != "op" {
		t.Fatalf("calls = %+v", got)
	}
	if n := scalar[uint64](t, s, "SELECT count() FROM calls FINAL"); n != 1 {
		t.Errorf("%d stored calls; want 1", n)
	}
}

func TestLateStartCompletesEndOnlyRow(t *testing.T) {
	s := openTestStore(t, Options{})
	end := t0.Add(40 * 24 * time.Hour) // next month: the anchor must not move
	mustWrite(t, s, endOp("e/p", "a", end))
	if got := readAll(t, s, "e/p"); len(got) != 0 {
		t.Fatalf("end-only call visible: %+v", got)
	}
	mustWrite(t, s, startOp("e/p", "a", "", t0))
	c, ok := readAll(t, s, "e/p")["a"]
	if !ok {
		t.Fatal("call not visible after its start arrived")
	}
	wantStart, wantEnd := t0.Truncate(time.Microsecond), end.Truncate(time.Microsecond)
	if !c.StartedAt.Equal(wantStart) || c.EndedAt == nil || !c.EndedAt.Equal(wantEnd) || string(c.Output) != `"done"` ||
		string(c.Inputs) != `{"x": "a"}` || c.TraceID != "t-e/p" {
		t.Fatalf("merged call = %+v", c)
	}
	if n := scalar[uint64](t, s, "SELECT uniqExact(_partition_id) FROM calls"); n != 1 {
		t.Errorf("versions of one call span %d partitions; want 1", n)
	}
	for _, table := range []string{"calls", "call_ids"} {
		if err := s.conn.Exec(context.Background(), "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
			t.Fatal(err)
		}
		if n := scalar[uint64](t, s, "SELECT count() FROM "+table); n != 1 {
			t.Errorf("%d %s rows after merge; want the versions collapsed to 1", n, table)
		}
	}
	if got := readAll(t, s, "e/p"); !reflect.DeepEqual(got["a"], c) {
		t.Errorf("merge changed the call: %+v", got["a"])
	}
}

func TestDeleteCascadesWithinBatchAndStays(t *testing.T) {
	s := openTestStore(t, Options{})
	mustWrite(t, s, startOp("e/p", "root", "", t0), startOp("e/p", "kid", "root", t0))
	res := mustWrite(t, s, startOp("e/p", "grandkid", "kid", t0), endOp("e/p", "kid", t0.Add(time.Second)),
		storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"root", "nope"}, At: t0}},
		startOp("e/p", "later", "root", t0))
	if res[2].NumDeleted != 3 {
		t.Errorf("num_deleted = %d; want 3 (root, kid, grandkid; not the unknown id)", res[2].NumDeleted)
	}
	if got := readAll(t, s, "e/p"); len(got) != 1 || got["later"].ID == "" {
		t.Fatalf("visible after delete: %v", got)
	}
	// Re-sent parts and renames of deleted calls do not bring them back.
	mustWrite(t, s, startOp("e/p", "kid", "root", t0),
		storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "root", DisplayName: "x"}},
		storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "unknown", DisplayName: "x"}})
	if got := readAll(t, s, "e/p"); len(got) != 1 {
		t.Fatalf("deleted calls came back: %v", got)
	}
	// The update and the delete of calls not stored yet are kept, unseen,
	// for their starts.
	if n := scalar[uint64](t, s, "SELECT count() FROM calls FINAL WHERE id = 'unknown' AND NOT has_start AND renamed AND display_name = 'x'"); n != 1 {
		t.Errorf("the update of a call not stored yet left %d pending rows; want 1", n)
	}
	if n := scalar[uint64](t, s, "SELECT count() FROM calls FINAL WHERE id = 'nope' AND NOT has_start AND deleted_at IS NOT NULL"); n != 1 {
		t.Errorf("the delete of a call not stored yet left %d pending rows; want 1", n)
	}
}

func TestRetentionSetsExpiryAndTTLDrops(t *testing.T) {
	keep := map[string]time.Duration{"e/short": 24 * time.Hour}
	s := openTestStore(t, Options{Retention: func(p string, _ time.Time) time.Duration { return keep[p] }})
	old := time.Date(2020, 5, 1, 0, 0, 0, 0, time.UTC)
	// The expiry is checked on a call that has not expired yet: a
	// background TTL merge may drop the old one at any moment.
	recent := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	mustWrite(t, s, startOp("e/short", "old", "", old), startOp("e/short", "new", "", recent),
		startOp("e/keep", "old", "", old))
	expiry := scalar[time.Time](t, s, "SELECT expire_at FROM calls WHERE project_id = 'e/short' AND id = 'new'")
	if want := recent.Add(24 * time.Hour); !expiry.Equal(want) {
		t.Errorf("expire_at = %v; want %v", expiry, want)
	}
	if n := scalar[uint64](t, s, "SELECT count() FROM calls WHERE project_id = 'e/keep' AND expire_at IS NULL"); n != 1 {
		t.Errorf("a project without retention got an expiry")
	}
	if err := s.conn.Exec(context.Background(), "OPTIMIZE TABLE calls FINAL"); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "e/short"); len(got) != 1 || got["new"].ID == "" {
		t.Errorf("e/short after TTL: %v; want only the new call", got)
	}
	if got := readAll(t, s, "e/keep"); len(got) != 1 {
		t.Errorf("e/keep after TTL: %v; want its old call kept", got)
	}
}

// TestConcurrentSidesOfOneCall writes the start and end of each call from
// different goroutines at once: neither side may be lost.
func TestConcurrentSidesOfOneCall(t *testing.T) {
	s := openTestStore(t, Options{})
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		id := fmt.Sprintf("c%02d", i)
		for _, op := range []storage.CallOp{startOp("e/p", id, "", t0), endOp("e/p", id, t0.Add(time.Second))} {
			wg.Go(func() {
				_, err := s.WriteCallOps(context.Background(), []storage.CallOp{op})
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := readAll(t, s, "e/p")
	for i := range n {
		if c := got[fmt.Sprintf("c%02d", i)]; c.EndedAt == nil || c.OpName != "op" {
			t.Errorf("call %d lost a side: %+v", i, c)
		}
	}
}

func TestLargeBatchRedelivery(t *testing.T) {
	s := openTestStore(t, Options{})
	var ops []storage.CallOp
	for i := range 2*lookupChunk + 500 {
		ops = append(ops, startOp("e/p", fmt.Sprintf("id-%05d", i), "", t0.Add(time.Duration(i)*time.Millisecond)))
	}
	mustWrite(t, s, ops...)
	for i := range ops {
		ops[i] = endOp("e/p", ops[i].Part.Call.ID, t0.Add(time.Hour))
	}
	mustWrite(t, s, ops...)
	versions := currentVersions(t, s)
	mustWrite(t, s, ops...)
	if got := currentVersions(t, s); got != versions {
		t.Error("the redelivered batch wrote new versions")
	}
	if n := scalar[uint64](t, s, "SELECT count() FROM calls FINAL"); n != uint64(len(ops)) {
		t.Errorf("%d stored calls; want %d", n, len(ops))
	}
	st, err := s.CountCalls(context.Background(), storage.CallsQuery{ProjectID: "e/p",
		Where: mustParseQuery(t, `{"$expr":{"$eq":[{"$getField":"summary.weave.status"},{"$literal":"success"}]}}`)}, 0)
	if err != nil || st.Count != int64(len(ops)) {
		t.Errorf("ended calls = %d, %v; want %d", st.Count, err, len(ops))
	}
}
