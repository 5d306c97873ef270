package conformance

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// testListProjectsWithData lists the projects that hold only objects,
// only a table or only feedback too, with their counts, the most recently
// active first; deleted objects and other entities are left out.
func testListProjectsWithData(t *testing.T, s aggregateStore) {
	ctx := context.Background()
	writeAggregateFixture(t, s) // e/a, calls until base+10m
	ops := timedCall("z", "", "chat", 20*time.Minute, time.Second, false, `{}`)
	for _, op := range ops {
		op.Part.Call.ProjectID = "e/z"
	}
	write(t, s, ops...)
	createFeedback(t, s, fb("e/f", "f1", callRef("e/f", "c1"), "custom", `{"score":1}`, base.Add(30*time.Minute)),
		fb("e/f", "f2", callRef("e/f", "c1"), "custom", `{"score":2}`, base.Add(25*time.Minute)),
		fb("e/a", "f3", callRef("e/a", "c1"), "custom", `{"score":3}`, base.Add(15*time.Minute)),
		fb("ee/x", "f4", callRef("ee/x", "c1"), "custom", `{}`, base.Add(time.Hour)))
	tblCreate(t, s, "e/t", `[{"q":"2+2?"}]`)
	objCreate(t, s, "e/o", "model", `{"v":1}`)
	objCreate(t, s, "e/o", "model", `{"v":2}`)
	gone := objCreate(t, s, "e/gone", "tmp", `{"v":1}`)
	if _, err := s.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: "e/gone", ObjectID: "tmp", Digests: []string{gone}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListProjects(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("ListProjects(e) = %+v\nwant e/o, e/t, e/f, e/z, e/a", got)
	}
	for _, p := range got[:2] { // objects and tables are stamped when written: now
		ok := (p.ProjectID == "e/o" && p.ObjectCount == 2 && p.TableCount == 0) || (p.ProjectID == "e/t" && p.TableCount == 1 && p.ObjectCount == 0)
		if !ok || p.CallCount != 0 || !p.LastCallAt.IsZero() || time.Since(p.LastActivityAt) > time.Hour {
			t.Errorf("project written now = %+v, want e/o with 2 object versions or e/t with a table", p)
		}
	}
	want := []storage.ProjectSummary{
		{ProjectID: "e/f", FeedbackCount: 2, LastActivityAt: base.Add(30 * time.Minute)},
		{ProjectID: "e/z", CallCount: 1, LastCallAt: base.Add(20 * time.Minute), LastActivityAt: base.Add(20 * time.Minute)},
		{ProjectID: "e/a", CallCount: 6, LastCallAt: base.Add(10 * time.Minute), FeedbackCount: 1, LastActivityAt: base.Add(15 * time.Minute)}}
	if !reflect.DeepEqual(got[2:], want) {
		t.Errorf("older projects = %+v\nwant %+v", got[2:], want)
	}
}
