package conformance

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// annotationStore is what the annotation queue cases need: queues, and
// calls to put in them.
type annotationStore interface {
	storage.CallWriter
	storage.AnnotationQueueStore
}

// runAnnotations runs every annotation queue case against stores made by
// newStore.
func runAnnotations(t *testing.T, newStore func(t *testing.T) annotationStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s annotationStore)
	}{
		{"QueueLifecycle", testQueueLifecycle},
		{"QueueQueryNameSortPaging", testQueueQuery},
		{"AddCallsCopiesCallFieldsAndCounts", testAddCalls},
		{"ItemsFilterSortPosition", testQueueItemsQuery},
		{"ProgressIsPerAnnotator", testAnnotatorProgress},
		{"StatsCountCompletedOrSkipped", testQueueStats},
		{"ProjectIsolation", testAnnotationIsolation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func newQueue(t *testing.T, s storage.AnnotationQueueStore, project, id, name string, at time.Time) storage.AnnotationQueue {
	t.Helper()
	q := storage.AnnotationQueue{ProjectID: project, ID: id, Name: name, Description: "about " + name,
		ScorerRefs: []string{"weave:///" + project + "/object/scorer:abc"}, CreatedAt: at, CreatedBy: "creator", UpdatedAt: at}
	if err := s.CreateAnnotationQueue(context.Background(), q); err != nil {
		t.Fatalf("CreateAnnotationQueue(%s): %v", id, err)
	}
	return q
}

func addCalls(t *testing.T, s storage.AnnotationQueueStore, project, queue string, calls ...string) storage.AnnotationQueueAddRes {
	t.Helper()
	res, err := s.AddAnnotationQueueCalls(context.Background(), storage.AnnotationQueueAddCalls{ProjectID: project,
		QueueID: queue, CallIDs: calls, DisplayFields: []string{"inputs.x", "output"}, AddedBy: "adder", At: base})
	if err != nil {
		t.Fatalf("AddAnnotationQueueCalls(%v): %v", calls, err)
	}
	return res
}

func queueItems(t *testing.T, s storage.AnnotationQueueStore, q storage.AnnotationQueueItemsQuery) []storage.AnnotationQueueItem {
	t.Helper()
	items, err := s.QueryAnnotationQueueItems(context.Background(), q)
	if err != nil {
		t.Fatalf("QueryAnnotationQueueItems(%+v): %v", q, err)
	}
	return items
}

func itemCalls(items []storage.AnnotationQueueItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.CallID
	}
	return out
}

func queueIDs(qs []storage.AnnotationQueue) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.ID
	}
	return out
}

// writeQueueCalls stores c1 (ended), c2 and c3 (running) in e/p with op
// names a, b, a and traces t1, t1, t2, started a minute apart, and x1 in
// e/other.
func writeQueueCalls(t *testing.T, s storage.CallWriter) {
	write(t, s,
		start("e/p", "c1", "t1", "", "a", base), end("e/p", "c1", base.Add(time.Second), `1`),
		start("e/p", "c2", "t1", "c1", "b", base.Add(time.Minute)),
		start("e/p", "c3", "t2", "", "a", base.Add(2*time.Minute)),
		start("e/other", "x1", "tx", "", "a", base))
}

func testQueueLifecycle(t *testing.T, s annotationStore) {
	ctx := context.Background()
	q := newQueue(t, s, "e/p", "q1", "Errors", base)
	got, err := s.ReadAnnotationQueue(ctx, "e/p", "q1")
	if err != nil || !reflect.DeepEqual(got, q) {
		t.Fatalf("read = %+v, %v; want %+v", got, err, q)
	}

	name := "Renamed"
	later := base.Add(time.Hour)
	upd, err := s.UpdateAnnotationQueue(ctx, storage.AnnotationQueueUpdate{ProjectID: "e/p", ID: "q1", Name: &name, UpdatedAt: later})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	want := q
	want.Name, want.UpdatedAt = name, later
	if !reflect.DeepEqual(upd, want) {
		t.Fatalf("updated = %+v, want %+v (only name and updated_at change)", upd, want)
	}
	if got, _ := s.ReadAnnotationQueue(ctx, "e/p", "q1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("read after update = %+v, want %+v", got, want)
	}
	same, err := s.UpdateAnnotationQueue(ctx, storage.AnnotationQueueUpdate{ProjectID: "e/p", ID: "q1", UpdatedAt: base.Add(2 * time.Hour)})
	if err != nil || !reflect.DeepEqual(same, want) {
		t.Fatalf("update without fields = %+v, %v; want the queue unchanged", same, err)
	}
	refs := []string{}
	cleared, err := s.UpdateAnnotationQueue(ctx, storage.AnnotationQueueUpdate{ProjectID: "e/p", ID: "q1", ScorerRefs: &refs, UpdatedAt: later})
	if err != nil || len(cleared.ScorerRefs) != 0 {
		t.Fatalf("clear scorer_refs = %+v, %v", cleared, err)
	}

	newQueue(t, s, "e/p", "q2", "Other", base)
	at := base.Add(3 * time.Hour)
	del, err := s.DeleteAnnotationQueue(ctx, "e/p", "q1", at)
	if err != nil || del.DeletedAt == nil || !del.DeletedAt.Equal(at) || !del.UpdatedAt.Equal(at) || !del.CreatedAt.Equal(base) {
		t.Fatalf("delete = %+v, %v; want deleted_at and updated_at %v, created_at kept", del, err, at)
	}
	_, err = s.ReadAnnotationQueue(ctx, "e/p", "q1")
	wantKind(t, "read deleted queue", err, storage.ErrNotFound)
	_, err = s.DeleteAnnotationQueue(ctx, "e/p", "q1", at)
	wantKind(t, "delete deleted queue", err, storage.ErrNotFound)
	_, err = s.UpdateAnnotationQueue(ctx, storage.AnnotationQueueUpdate{ProjectID: "e/p", ID: "q1", Name: &name, UpdatedAt: at})
	wantKind(t, "update deleted queue", err, storage.ErrNotFound)
	_, err = s.DeleteAnnotationQueue(ctx, "e/p", "nope", at)
	wantKind(t, "delete unknown queue", err, storage.ErrNotFound)
	qs, err := s.QueryAnnotationQueues(ctx, storage.AnnotationQueuesQuery{ProjectID: "e/p"})
	if err != nil || !slices.Equal(queueIDs(qs), []string{"q2"}) {
		t.Fatalf("queues after delete = %v, %v; want [q2]", queueIDs(qs), err)
	}
}

func testQueueQuery(t *testing.T, s annotationStore) {
	ctx := context.Background()
	newQueue(t, s, "e/p", "q1", "Error Review", base)
	newQueue(t, s, "e/p", "q2", "quality check", base.Add(time.Minute))
	newQueue(t, s, "e/p", "q3", "ERRORS 100%", base.Add(2*time.Minute))
	newQueue(t, s, "e/p", "q4", "Errors 1000", base.Add(3*time.Minute))
	pct := "100%"
	errName := "error"
	for _, tc := range []struct {
		name string
		q    storage.AnnotationQueuesQuery
		want []string
	}{
		{"default newest first", storage.AnnotationQueuesQuery{}, []string{"q4", "q3", "q2", "q1"}},
		{"name ignores case", storage.AnnotationQueuesQuery{Name: &errName}, []string{"q4", "q3", "q1"}},
		{"name is literal, not a pattern", storage.AnnotationQueuesQuery{Name: &pct}, []string{"q3"}},
		{"sort by name", storage.AnnotationQueuesQuery{SortBy: []storage.SortBy{{Field: "name", Direction: "ASC"}}},
			[]string{"q3", "q1", "q4", "q2"}},
		{"paged", storage.AnnotationQueuesQuery{SortBy: []storage.SortBy{{Field: "created_at", Direction: "asc"}}, Limit: 2, Offset: 1},
			[]string{"q2", "q3"}},
	} {
		tc.q.ProjectID = "e/p"
		qs, err := s.QueryAnnotationQueues(ctx, tc.q)
		if err != nil || !slices.Equal(queueIDs(qs), tc.want) {
			t.Errorf("%s: queues = %v, %v; want %v", tc.name, queueIDs(qs), err, tc.want)
		}
	}
	_, err := s.QueryAnnotationQueues(ctx, storage.AnnotationQueuesQuery{ProjectID: "e/p",
		SortBy: []storage.SortBy{{Field: "description", Direction: "asc"}}})
	wantKind(t, "sort by description", err, storage.ErrInvalidArgument)
}

func testAddCalls(t *testing.T, s annotationStore) {
	ctx := context.Background()
	writeQueueCalls(t, s)
	newQueue(t, s, "e/p", "q1", "Q", base)
	res := addCalls(t, s, "e/p", "q1", "c1", "c2", "c1", "missing", "x1")
	if res != (storage.AnnotationQueueAddRes{Added: 2}) {
		t.Fatalf("first add = %+v; want 2 added (repeats, unknown ids and other projects' calls are not)", res)
	}
	res = addCalls(t, s, "e/p", "q1", "c2", "c3")
	if res != (storage.AnnotationQueueAddRes{Added: 1, Duplicates: 1}) {
		t.Fatalf("second add = %+v; want 1 added, 1 duplicate", res)
	}

	items := queueItems(t, s, storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1"})
	if got := itemCalls(items); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("items = %v; want c1, c2, c3 in the order added", got)
	}
	c1 := items[0]
	ended := base.Add(time.Second)
	if !c1.CallStartedAt.Equal(base) || c1.CallEndedAt == nil || !c1.CallEndedAt.Equal(ended) ||
		c1.CallOpName != "a" || c1.CallTraceID != "t1" || c1.QueueID != "q1" || c1.ProjectID != "e/p" {
		t.Errorf("c1 item = %+v; want the call's started_at, ended_at, op_name and trace_id copied", c1)
	}
	if items[1].CallEndedAt != nil {
		t.Errorf("running call's item ended_at = %v; want none", items[1].CallEndedAt)
	}
	if !slices.Equal(c1.DisplayFields, []string{"inputs.x", "output"}) || c1.AddedBy == nil || *c1.AddedBy != "adder" ||
		c1.CreatedBy != "adder" || !c1.CreatedAt.Equal(base) || c1.DeletedAt != nil || c1.ID == "" {
		t.Errorf("c1 item = %+v; want display fields, adder and add time kept", c1)
	}
	if c1.AnnotationState != storage.AnnotationUnstarted || c1.AnnotatorUserID != "" || c1.PositionInQueue != nil {
		t.Errorf("new item state = %q by %q, position %v; want unstarted by nobody, no position", c1.AnnotationState,
			c1.AnnotatorUserID, c1.PositionInQueue)
	}

	_, err := s.AddAnnotationQueueCalls(ctx, storage.AnnotationQueueAddCalls{ProjectID: "e/p", QueueID: "nope", CallIDs: []string{"c1"}})
	wantKind(t, "add to unknown queue", err, storage.ErrNotFound)
	if _, err := s.DeleteAnnotationQueue(ctx, "e/p", "q1", base); err != nil {
		t.Fatal(err)
	}
	_, err = s.AddAnnotationQueueCalls(ctx, storage.AnnotationQueueAddCalls{ProjectID: "e/p", QueueID: "q1", CallIDs: []string{"c1"}})
	wantKind(t, "add to deleted queue", err, storage.ErrNotFound)
	_, err = s.QueryAnnotationQueueItems(ctx, storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1"})
	wantKind(t, "items of deleted queue", err, storage.ErrNotFound)
}

func progress(s storage.AnnotationQueueStore, queue, item, annotator, state string, at time.Time) (storage.AnnotationQueueItem, error) {
	return s.UpdateAnnotatorProgress(context.Background(), storage.AnnotatorProgressUpdate{ProjectID: "e/p", QueueID: queue,
		ItemID: item, AnnotatorID: annotator, State: state, ProgressID: storage.NewAnnotationID(), At: at})
}

func mustProgress(t *testing.T, s storage.AnnotationQueueStore, queue, item, annotator, state string, at time.Time) storage.AnnotationQueueItem {
	t.Helper()
	it, err := progress(s, queue, item, annotator, state, at)
	if err != nil {
		t.Fatalf("%s sets %s on %s: %v", annotator, state, item, err)
	}
	return it
}

func testQueueItemsQuery(t *testing.T, s annotationStore) {
	writeQueueCalls(t, s)
	newQueue(t, s, "e/p", "q1", "Q", base)
	addCalls(t, s, "e/p", "q1", "c1", "c2", "c3")
	items := queueItems(t, s, storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1"})
	mustProgress(t, s, "q1", items[1].ID, "u1", storage.AnnotationCompleted, base)

	str := func(v string) *string { return &v }
	desc := []storage.SortBy{{Field: "call_started_at", Direction: "desc"}}
	for _, tc := range []struct {
		name      string
		q         storage.AnnotationQueueItemsQuery
		want      []string
		positions []int64
	}{
		{"by call", storage.AnnotationQueueItemsQuery{Filter: storage.AnnotationQueueItemsFilter{CallID: str("c2")}}, []string{"c2"}, nil},
		{"by op", storage.AnnotationQueueItemsQuery{Filter: storage.AnnotationQueueItemsFilter{CallOpName: str("a")}}, []string{"c1", "c3"}, nil},
		{"by trace", storage.AnnotationQueueItemsQuery{Filter: storage.AnnotationQueueItemsFilter{CallTraceID: str("t1")}}, []string{"c1", "c2"}, nil},
		{"by adder", storage.AnnotationQueueItemsQuery{Filter: storage.AnnotationQueueItemsFilter{AddedBy: str("someone")}}, []string{}, nil},
		{"by item id", storage.AnnotationQueueItemsQuery{Filter: storage.AnnotationQueueItemsFilter{ID: &items[2].ID}}, []string{"c3"}, nil},
		{"by state", storage.AnnotationQueueItemsQuery{Filter: storage.AnnotationQueueItemsFilter{
			AnnotationStates: []string{storage.AnnotationUnstarted}}}, []string{"c1", "c3"}, nil},
		{"sorted", storage.AnnotationQueueItemsQuery{SortBy: desc}, []string{"c3", "c2", "c1"}, nil},
		{"positions in the sorted queue", storage.AnnotationQueueItemsQuery{SortBy: desc, IncludePosition: true},
			[]string{"c3", "c2", "c1"}, []int64{1, 2, 3}},
		{"positions before the state filter", storage.AnnotationQueueItemsQuery{SortBy: desc, IncludePosition: true,
			Filter: storage.AnnotationQueueItemsFilter{AnnotationStates: []string{storage.AnnotationUnstarted}}},
			[]string{"c3", "c1"}, []int64{1, 3}},
		{"paged", storage.AnnotationQueueItemsQuery{SortBy: desc, Limit: 1, Offset: 1, IncludePosition: true},
			[]string{"c2"}, []int64{2}},
	} {
		tc.q.ProjectID, tc.q.QueueID = "e/p", "q1"
		got := queueItems(t, s, tc.q)
		if !slices.Equal(itemCalls(got), tc.want) {
			t.Errorf("%s: items = %v, want %v", tc.name, itemCalls(got), tc.want)
			continue
		}
		for i, it := range got {
			switch {
			case tc.positions == nil && it.PositionInQueue != nil:
				t.Errorf("%s: %s has position %d; want none", tc.name, it.CallID, *it.PositionInQueue)
			case tc.positions != nil && (it.PositionInQueue == nil || *it.PositionInQueue != tc.positions[i]):
				t.Errorf("%s: %s position = %v, want %d", tc.name, it.CallID, it.PositionInQueue, tc.positions[i])
			}
		}
	}
	_, err := s.QueryAnnotationQueueItems(context.Background(), storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1",
		SortBy: []storage.SortBy{{Field: "call_id", Direction: "asc"}}})
	wantKind(t, "sort by call_id", err, storage.ErrInvalidArgument)
}

func testAnnotatorProgress(t *testing.T, s annotationStore) {
	writeQueueCalls(t, s)
	newQueue(t, s, "e/p", "q1", "Q", base)
	newQueue(t, s, "e/p", "q2", "Other", base)
	addCalls(t, s, "e/p", "q1", "c1", "c2")
	items := queueItems(t, s, storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1"})
	item := items[0].ID
	at := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }

	it := mustProgress(t, s, "q1", item, "u1", storage.AnnotationInProgress, at(1))
	if it.ID != item || it.AnnotationState != storage.AnnotationInProgress || it.AnnotatorUserID != "u1" {
		t.Fatalf("after u1 starts: %+v; want the item in_progress by u1", it)
	}
	mustProgress(t, s, "q1", item, "u1", storage.AnnotationInProgress, at(2)) // a retry is a no-op
	it = mustProgress(t, s, "q1", item, "u1", storage.AnnotationCompleted, at(3))
	if it.AnnotationState != storage.AnnotationCompleted {
		t.Fatalf("after u1 completes: state %q", it.AnnotationState)
	}
	mustProgress(t, s, "q1", item, "u1", storage.AnnotationCompleted, at(4))
	for _, state := range []string{storage.AnnotationSkipped, storage.AnnotationInProgress, storage.AnnotationUnstarted, "done"} {
		_, err := progress(s, "q1", item, "u1", state, at(5))
		wantKind(t, "u1 completed -> "+state, err, storage.ErrInvalidArgument)
	}

	// Another annotator has a record of their own: starting is allowed,
	// and the item shows the most recent record of anyone.
	it = mustProgress(t, s, "q1", item, "u2", storage.AnnotationInProgress, at(6))
	if it.AnnotationState != storage.AnnotationInProgress || it.AnnotatorUserID != "u2" {
		t.Fatalf("after u2 starts: %q by %q; want in_progress by u2", it.AnnotationState, it.AnnotatorUserID)
	}
	it = mustProgress(t, s, "q1", item, "u2", storage.AnnotationSkipped, at(7))
	if it.AnnotationState != storage.AnnotationSkipped || it.AnnotatorUserID != "u2" {
		t.Fatalf("after u2 skips: %q by %q", it.AnnotationState, it.AnnotatorUserID)
	}
	other := queueItems(t, s, storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1"})[1]
	if other.AnnotationState != storage.AnnotationUnstarted {
		t.Errorf("untouched item state = %q; want unstarted", other.AnnotationState)
	}

	_, err := progress(s, "q1", "nope", "u1", storage.AnnotationCompleted, at(8))
	wantKind(t, "unknown item", err, storage.ErrNotFound)
	_, err = progress(s, "q2", item, "u1", storage.AnnotationCompleted, at(8))
	wantKind(t, "item of another queue", err, storage.ErrNotFound)
	_, err = progress(s, "nope", item, "u1", storage.AnnotationCompleted, at(8))
	wantKind(t, "unknown queue", err, storage.ErrNotFound)
}

func testQueueStats(t *testing.T, s annotationStore) {
	ctx := context.Background()
	writeQueueCalls(t, s)
	newQueue(t, s, "e/p", "q1", "Q1", base)
	newQueue(t, s, "e/p", "q2", "Q2", base)
	newQueue(t, s, "e/p", "empty", "Empty", base)
	addCalls(t, s, "e/p", "q1", "c1", "c2", "c3")
	addCalls(t, s, "e/p", "q2", "c1")
	items := queueItems(t, s, storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1"})
	mustProgress(t, s, "q1", items[0].ID, "u1", storage.AnnotationCompleted, base)
	mustProgress(t, s, "q1", items[0].ID, "u2", storage.AnnotationSkipped, base) // one item, two annotators
	mustProgress(t, s, "q1", items[1].ID, "u2", storage.AnnotationSkipped, base)
	mustProgress(t, s, "q1", items[2].ID, "u1", storage.AnnotationInProgress, base)

	stats, err := s.AnnotationQueuesStats(ctx, "e/p", []string{"q2", "q1", "empty", "nope", "q1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.AnnotationQueueStats{{QueueID: "q2", TotalItems: 1}, {QueueID: "q1", TotalItems: 3, CompletedItems: 2},
		{QueueID: "empty"}, {QueueID: "nope"}}
	if !reflect.DeepEqual(stats, want) {
		t.Fatalf("stats = %+v, want %+v", stats, want)
	}
	if stats, err := s.AnnotationQueuesStats(ctx, "e/p", nil); err != nil || len(stats) != 0 {
		t.Fatalf("stats of no queues = %+v, %v; want none", stats, err)
	}
}

func testAnnotationIsolation(t *testing.T, s annotationStore) {
	ctx := context.Background()
	writeQueueCalls(t, s)
	newQueue(t, s, "e/p", "q1", "Mine", base)
	addCalls(t, s, "e/p", "q1", "c1")
	item := queueItems(t, s, storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1"})[0].ID
	mustProgress(t, s, "q1", item, "u1", storage.AnnotationCompleted, base)

	_, err := s.ReadAnnotationQueue(ctx, "e/other", "q1")
	wantKind(t, "read from another project", err, storage.ErrNotFound)
	qs, err := s.QueryAnnotationQueues(ctx, storage.AnnotationQueuesQuery{ProjectID: "e/other"})
	if err != nil || len(qs) != 0 {
		t.Fatalf("other project's queues = %v, %v; want none", queueIDs(qs), err)
	}
	_, err = s.QueryAnnotationQueueItems(ctx, storage.AnnotationQueueItemsQuery{ProjectID: "e/other", QueueID: "q1"})
	wantKind(t, "items from another project", err, storage.ErrNotFound)
	_, err = s.AddAnnotationQueueCalls(ctx, storage.AnnotationQueueAddCalls{ProjectID: "e/other", QueueID: "q1", CallIDs: []string{"x1"}})
	wantKind(t, "add from another project", err, storage.ErrNotFound)
	_, err = s.UpdateAnnotatorProgress(ctx, storage.AnnotatorProgressUpdate{ProjectID: "e/other", QueueID: "q1", ItemID: item,
		AnnotatorID: "u1", State: storage.AnnotationSkipped, ProgressID: storage.NewAnnotationID(), At: base})
	wantKind(t, "progress from another project", err, storage.ErrNotFound)
	_, err = s.DeleteAnnotationQueue(ctx, "e/other", "q1", base)
	wantKind(t, "delete from another project", err, storage.ErrNotFound)
	stats, err := s.AnnotationQueuesStats(ctx, "e/other", []string{"q1"})
	if err != nil || !reflect.DeepEqual(stats, []storage.AnnotationQueueStats{{QueueID: "q1"}}) {
		t.Fatalf("stats from another project = %+v, %v; want nothing counted", stats, err)
	}

	// The same ids in another project are another queue.
	newQueue(t, s, "e/other", "q1", "Theirs", base)
	if got := addCalls(t, s, "e/other", "q1", "c1", "x1"); got != (storage.AnnotationQueueAddRes{Added: 1}) {
		t.Fatalf("add to e/other's q1 = %+v; want only its own call x1 added", got)
	}
	mine, _ := s.ReadAnnotationQueue(ctx, "e/p", "q1")
	if mine.Name != "Mine" {
		t.Fatalf("e/p's q1 = %+v; another project's queue of the same id changed it", mine)
	}
	if got := itemCalls(queueItems(t, s, storage.AnnotationQueueItemsQuery{ProjectID: "e/p", QueueID: "q1"})); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("e/p's q1 items = %v; want [c1]", got)
	}
}
