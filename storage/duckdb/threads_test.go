package duckdb

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// TestQueryThreadsRowTypes checks the typed values QueryThreads promises
// for each of sqlgen.ThreadColumns, including NULL quantiles' absence.
func TestQueryThreadsRowTypes(t *testing.T) {
	s := openContentStore(t)
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var ops []storage.CallOp
	for i, id := range []string{"t1", "t2"} {
		end := base.Add(time.Duration(i+1) * time.Minute).Add(250 * time.Millisecond)
		c := storage.Call{ProjectID: "e/p", ID: id, TraceID: "tr-" + id, OpName: "op", ThreadID: "th", TurnID: id,
			StartedAt: base.Add(time.Duration(i+1) * time.Minute), EndedAt: &end,
			Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`)}
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}})
	}
	if _, err := s.WriteCallOps(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for row, err := range s.QueryThreads(context.Background(), sqlgen.ThreadsQuery{ProjectID: "e/p"}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	want := [][]any{{"th", int64(2), base.Add(time.Minute), base.Add(2*time.Minute + 250*time.Millisecond),
		"t1", "t2", 250.0, 250.0}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %#v\nwant %#v", rows, want)
	}
	if len(rows) == 1 && len(rows[0]) != len(sqlgen.ThreadColumns) {
		t.Errorf("%d values for %d columns", len(rows[0]), len(sqlgen.ThreadColumns))
	}
}

func TestQueryThreadsErrors(t *testing.T) {
	s := openContentStore(t)
	q := sqlgen.ThreadsQuery{ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "nope", Direction: "asc"}}}
	n := 0
	for row, err := range s.QueryThreads(context.Background(), q) {
		n++
		if row != nil || !errors.Is(err, storage.ErrInvalidArgument) {
			t.Errorf("got %v, %v; want one ErrInvalidArgument", row, err)
		}
	}
	if n != 1 {
		t.Errorf("the sequence yielded %d times; want once", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range s.QueryThreads(ctx, sqlgen.ThreadsQuery{ProjectID: "e/p"}) {
		if err == nil {
			t.Error("a cancelled query yielded a row")
		}
	}
}
