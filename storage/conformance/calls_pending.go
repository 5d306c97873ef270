package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func rename(project, id, name string) storage.CallOp {
	return storage.CallOp{Update: &storage.CallUpdate{ProjectID: project, ID: id, DisplayName: name}}
}

// named is a start that carries a display name of its own.
func named(project, id, name string) storage.CallOp {
	op := start(project, id, "t", "", "op", base)
	op.Part.Call.DisplayName = name
	return op
}

func displayNames(t *testing.T, s callStore, project string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range query(t, s, storage.CallsQuery{ProjectID: project}) {
		out[c.ID] = c.DisplayName
	}
	return out
}

func count(t *testing.T, s callStore, project string) int64 {
	t.Helper()
	st, err := s.CountCalls(context.Background(), storage.CallsQuery{ProjectID: project}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st.Count
}

// testUpdateBeforeStart: a rename that reaches the store before its call
// (the SDKs batch starts, and may rename at once) is kept, invisible, and
// applied when the start lands, in a later batch or the same one; a start
// sent again afterwards does not undo it, and a later rename still wins.
func testUpdateBeforeStart(t *testing.T, s callStore) {
	write(t, s, rename("e/p", "a", "renamed"))
	if got := count(t, s, "e/p"); got != 0 {
		t.Fatalf("a rename alone made %d visible calls", got)
	}
	write(t, s, named("e/p", "a", "original"), end("e/p", "a", base.Add(time.Second), `1`))
	write(t, s, rename("e/p", "b", "renamed b"), named("e/p", "b", "original b"))
	write(t, s, rename("e/p", "c", ""), named("e/p", "c", "original c"))
	want := map[string]string{"a": "renamed", "b": "renamed b", "c": ""}
	if got := displayNames(t, s, "e/p"); !equalMaps(got, want) {
		t.Fatalf("display names %v, want %v", got, want)
	}
	write(t, s, named("e/p", "a", "original"))
	write(t, s, rename("e/p", "b", "again"))
	want = map[string]string{"a": "renamed", "b": "again", "c": ""}
	if got := displayNames(t, s, "e/p"); !equalMaps(got, want) {
		t.Fatalf("after a re-sent start and a second rename: %v, want %v", got, want)
	}
	if got := query(t, s, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: []string{"a"}}}); len(got) != 1 || got[0].EndedAt == nil {
		t.Fatalf("call a lost its end: %+v", got)
	}
}

// testDeleteBeforeStart: a delete that reaches the store before its call
// counts nothing, and the call is stored deleted when it lands; a rename
// after that does not bring it back.
func testDeleteBeforeStart(t *testing.T, s callStore) {
	if n := write(t, s, del("e/p", "gone", "gone"))[0].NumDeleted; n != 0 {
		t.Fatalf("num_deleted = %d for a call not stored yet, want 0", n)
	}
	write(t, s, start("e/p", "gone", "t", "", "op", base), end("e/p", "gone", base.Add(time.Second), `1`),
		start("e/p", "kept", "t", "", "op", base))
	write(t, s, rename("e/p", "gone", "back?"))
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p"}), "kept")
	if got := count(t, s, "e/p"); got != 1 {
		t.Fatalf("count = %d, want 1", got)
	}
	if n := write(t, s, del("e/p", "gone"))[0].NumDeleted; n != 0 {
		t.Fatalf("deleting it again counted %d", n)
	}
	write(t, s, del("other/p", "kept"))
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p"}), "kept")
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
