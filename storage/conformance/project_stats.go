package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// projectStatsStore is what the project stats cases need.
type projectStatsStore interface {
	storage.CallWriter
	storage.ObjectStore
	storage.TableStore
	storage.FileStore
	storage.ProjectStatsReader
}

// runProjectStats: /project/stats answers each project's own sizes; the
// calls' bytes are split by the projects' counts of calls.
func runProjectStats(t *testing.T, newStore func(t *testing.T) projectStatsStore) {
	s := newStore(t)
	ctx := context.Background()
	for i, id := range []string{"a1", "a2", "a3"} {
		write(t, s, start("acme/a", id, "t"+id, "", "op", base.Add(time.Duration(i)*time.Second)))
	}
	write(t, s, start("acme/b", "b1", "tb", "", "op", base))
	objCreate(t, s, "acme/a", "thing", `{"text":"some words to take space"}`)
	objCreate(t, s, "acme/b", "other", `{"n":1}`)
	rows := []json.RawMessage{json.RawMessage(`{"q":"one"}`), json.RawMessage(`{"q":"two"}`)}
	if _, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: "acme/a", Rows: rows}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateFile(ctx, storage.FileCreateReq{ProjectID: "acme/a", Name: "f.txt", Content: bytes.NewReader(make([]byte, 1234))}); err != nil {
		t.Fatal(err)
	}
	stats := func(project string) storage.ProjectStats {
		t.Helper()
		st, err := s.ProjectStats(ctx, project)
		if err != nil {
			t.Fatalf("ProjectStats(%s): %v", project, err)
		}
		return st
	}
	a, b, none := stats("acme/a"), stats("acme/b"), stats("acme/none")
	if a.FileBytes != 1234 || b.FileBytes != 0 {
		t.Errorf("file bytes a=%d b=%d; want 1234 and 0", a.FileBytes, b.FileBytes)
	}
	if a.ObjectBytes <= b.ObjectBytes || b.ObjectBytes <= 0 {
		t.Errorf("object bytes a=%d b=%d; want a's larger object to weigh more, both > 0", a.ObjectBytes, b.ObjectBytes)
	}
	if a.TableBytes <= 0 || b.TableBytes != 0 {
		t.Errorf("table bytes a=%d b=%d; want > 0 and 0", a.TableBytes, b.TableBytes)
	}
	if a.TraceBytes <= 0 || b.TraceBytes <= 0 || a.TraceBytes < 2*b.TraceBytes {
		t.Errorf("trace bytes a=%d b=%d; want both > 0 and a's three calls about three times b's one", a.TraceBytes, b.TraceBytes)
	}
	if none != (storage.ProjectStats{}) {
		t.Errorf("a project with nothing = %+v; want zeros", none)
	}
	if _, err := s.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: "acme/b", ObjectID: "other"}); err != nil {
		t.Fatal(err)
	}
	if got := stats("acme/b").ObjectBytes; got != 0 {
		t.Errorf("object bytes after the delete = %d; want 0", got)
	}
}
