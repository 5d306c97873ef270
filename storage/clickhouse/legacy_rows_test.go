package clickhouse

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// A document holding a lone surrogate escape, as versions that did not
// clean them on the way in stored it, must not fail queries that filter
// or sort on its fields.
func TestStoredLoneSurrogatesStillQuery(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	doc := json.RawMessage(`{"q":"\ud800","n":1}`)
	call := storage.Call{ProjectID: "e/p", ID: "c1", TraceID: "t1", OpName: "op", StartedAt: at,
		Attributes: doc, Inputs: doc, Summary: doc}
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: &storage.CallPart{Kind: storage.PartStart, Call: call}}}); err != nil {
		t.Fatal(err)
	}
	where, err := querylang.Parse(json.RawMessage(`{"$expr":{"$eq":[{"$getField":"inputs.n"},{"$literal":"1"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	sort := []storage.SortBy{{Field: "inputs.q", Direction: "desc"}}
	for _, q := range []storage.CallsQuery{{ProjectID: "e/p", Where: where, SortBy: sort}, {ProjectID: "e/p", SortBy: sort}} {
		for _, err := range s.QueryCalls(ctx, q) {
			if err != nil {
				t.Fatalf("QueryCalls(%v): %v", q.Where, err)
			}
		}
	}
}
