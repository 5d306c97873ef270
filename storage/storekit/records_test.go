package storekit

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/storage/sqlgen"
)

// fakeSQL answers sqlgen table queries with fixed rows and records them.
type fakeSQL struct {
	rows    []json.RawMessage
	count   int64
	err     error
	queries []sqlgen.TableQuery
	tables  []string
}

func (f *fakeSQL) Rows(_ context.Context, t sqlgen.Table, q sqlgen.TableQuery) ([]json.RawMessage, error) {
	f.queries, f.tables = append(f.queries, q), append(f.tables, t.Name)
	return f.rows, f.err
}

func (f *fakeSQL) Count(_ context.Context, _ sqlgen.Table, _ sqlgen.TableQuery) (int64, error) {
	return f.count, f.err
}

func TestCheckPrices(t *testing.T) {
	good := pricing.Price{ID: "p1", Level: pricing.LevelProject, LevelID: "e/p", LLMID: "m"}
	cases := []struct {
		name string
		edit func(p *pricing.Price)
		err  error
	}{
		{"project row", func(*pricing.Price) {}, nil},
		{"default level", func(p *pricing.Price) { p.Level = pricing.LevelDefault }, storage.ErrInvalidArgument},
		{"no project", func(p *pricing.Price) { p.LevelID = "" }, storage.ErrInvalidArgument},
		{"no id", func(p *pricing.Price) { p.ID = "" }, storage.ErrInvalidArgument},
		{"no model", func(p *pricing.Price) { p.LLMID = "" }, storage.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := good
			c.edit(&p)
			if err := CheckPrices([]pricing.Price{good, p}); !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("err = %v; want %v", err, c.err)
			}
		})
	}
}

// TestPriceColumnsOrder: values and scan targets follow PriceColumns.
func TestPriceColumnsOrder(t *testing.T) {
	columns := strings.Fields(strings.ReplaceAll(PriceColumns, ",", " "))
	p := pricing.Price{EffectiveDate: time.Date(2024, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))}
	vals, targets := PriceValues(p), PriceTargets(&p)
	if len(vals) != len(columns) || len(targets) != len(columns) {
		t.Fatalf("%d columns, %d values, %d targets", len(columns), len(vals), len(targets))
	}
	if got := vals[slices.Index(columns, "effective_date")].(time.Time); got.Location() != time.UTC {
		t.Errorf("effective_date = %v; want UTC", got)
	}
	if targets[slices.Index(columns, "llm_id")] != &p.LLMID {
		t.Error("llm_id target is not the LLMID field")
	}
}

func TestQueryPrices(t *testing.T) {
	cases := []struct {
		name   string
		q      storage.CostQuery
		fields []string
		err    error
	}{
		{"default fields", storage.CostQuery{ProjectID: "e/p"}, storage.CostColumns, nil},
		{"chosen fields", storage.CostQuery{ProjectID: "e/p", Fields: []string{"llm_id"}}, []string{"llm_id"}, nil},
		{"unknown field", storage.CostQuery{ProjectID: "e/p", Fields: []string{"created_by"}}, nil, storage.ErrInvalidArgument},
		{"bad where", storage.CostQuery{ProjectID: "e/p", Where: json.RawMessage(`{"$nope": 1}`)}, nil, storage.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := &fakeSQL{rows: []json.RawMessage{json.RawMessage(`{}`)}}
			res, err := QueryPrices(context.Background(), db, c.q)
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("err = %v; want %v", err, c.err)
			}
			if err != nil {
				return
			}
			q := db.queries[0]
			wantScope := []sqlgen.TableScope{{Column: "pricing_level", Value: pricing.LevelProject}, {Column: "pricing_level_id", Value: "e/p"}}
			if !slices.Equal(q.Fields, c.fields) || !slices.Equal(q.Scope, wantScope) || db.tables[0] != "llm_token_prices" || len(res.Results) != 1 {
				t.Errorf("query %+v on %s, res %+v", q, db.tables[0], res)
			}
		})
	}
}

func TestCheckFeedback(t *testing.T) {
	good := storage.Feedback{ProjectID: "e/p", ID: "f1", Payload: json.RawMessage(`{}`)}
	cases := []struct {
		name string
		edit func(f *storage.Feedback)
		err  error
	}{
		{"valid", func(*storage.Feedback) {}, nil},
		{"no project", func(f *storage.Feedback) { f.ProjectID = "" }, storage.ErrInvalidArgument},
		{"no id", func(f *storage.Feedback) { f.ID = "" }, storage.ErrInvalidArgument},
		{"broken payload", func(f *storage.Feedback) { f.Payload = json.RawMessage(`{`) }, storage.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := good
			c.edit(&f)
			if err := CheckFeedback(f); !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("err = %v; want %v", err, c.err)
			}
		})
	}
	if err := CheckReplacement("e/other", good); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("replacement of another project: %v", err)
	}
}

func TestFeedbackValues(t *testing.T) {
	columns := strings.Fields(strings.ReplaceAll(FeedbackColumns, ",", " "))
	with := FeedbackValues(storage.Feedback{Extra: json.RawMessage(`{"x": 1}`)})
	without := FeedbackValues(storage.Feedback{})
	extra := slices.Index(columns, "extra")
	if len(with) != len(columns) || *with[extra].(*string) != `{"x": 1}` || without[extra].(*string) != nil {
		t.Errorf("values %v / %v for columns %v", with, without, columns)
	}
}

func TestQueryFeedback(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name string
		db   *fakeSQL
		want storage.FeedbackQueryRes
		err  error
	}{
		{"rows and count", &fakeSQL{rows: []json.RawMessage{json.RawMessage(`{}`)}, count: 7},
			storage.FeedbackQueryRes{Result: []json.RawMessage{json.RawMessage(`{}`)}, TotalCount: 7}, nil},
		{"engine error", &fakeSQL{err: boom}, storage.FeedbackQueryRes{}, boom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := QueryFeedback(context.Background(), c.db, storage.FeedbackQuery{ProjectID: "e/p"})
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) || res.TotalCount != c.want.TotalCount ||
				len(res.Result) != len(c.want.Result) {
				t.Errorf("got %+v, %v; want %+v, %v", res, err, c.want, c.err)
			}
		})
	}
}

func TestFeedbackForRefs(t *testing.T) {
	db := &fakeSQL{rows: []json.RawMessage{
		json.RawMessage(`{"id": "1", "weave_ref": "r1"}`),
		json.RawMessage(`{"id": "2", "weave_ref": "r2"}`),
		json.RawMessage(`{"id": "3", "weave_ref": "r1"}`),
	}}
	out, err := FeedbackForRefs(context.Background(), db, "e/p", [][]string{{"r1", "r2"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"r1": `[{"id":"1","weave_ref":"r1"},{"id":"3","weave_ref":"r1"}]`,
		"r2": `[{"id":"2","weave_ref":"r2"}]`,
	}
	for ref, list := range want {
		if string(out[ref]) != list {
			t.Errorf("%s: %s; want %s", ref, out[ref], list)
		}
	}
	in, ok := db.queries[0].Where.(*querylang.In)
	if len(out) != 2 || !ok || len(in.List) != 2 || db.queries[0].Scope[0].Value != "e/p" {
		t.Errorf("out %v, query %+v", out, db.queries[0])
	}
	empty, err := FeedbackForRefs(context.Background(), &fakeSQL{}, "e/p", nil)
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("no refs: %v, %v; want an empty map", empty, err)
	}
}

func TestFileName(t *testing.T) {
	cases := []struct {
		name string
		req  storage.FileCreateReq
		want string
		err  error
	}{
		{"named", storage.FileCreateReq{ProjectID: "e/p", Name: "a.txt"}, "a.txt", nil},
		{"unnamed", storage.FileCreateReq{ProjectID: "e/p"}, storage.DefaultFileName, nil},
		{"no project", storage.FileCreateReq{Name: "a.txt"}, "", storage.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FileName(c.req)
			if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("got %q, %v; want %q, %v", got, err, c.want, c.err)
			}
		})
	}
}

func TestApplyLabels(t *testing.T) {
	objs := []storage.ObjSchema{
		{ObjectID: "m", Digest: "a", IsLatest: 1},
		{ObjectID: "m", Digest: "b"},
	}
	tags := map[LabelKey][]string{{ObjectID: "m", Digest: "b"}: {"z", "B", "a"}}
	aliases := map[LabelKey][]string{{ObjectID: "m", Digest: "a"}: {"prod", "dev"}}
	ApplyLabels(objs, tags, aliases)
	cases := []struct {
		got, want []string
	}{
		{objs[0].Tags, []string{}},
		{objs[0].Aliases, []string{"latest", "dev", "prod"}},
		{objs[1].Tags, []string{"B", "a", "z"}},
		{objs[1].Aliases, []string{}},
	}
	for i, c := range cases {
		if c.got == nil || !slices.Equal(c.got, c.want) {
			t.Errorf("case %d: %#v; want %#v", i, c.got, c.want)
		}
	}
	if ids := ObjectIDs(append(objs, storage.ObjSchema{ObjectID: "a"})); !slices.Equal(ids, []string{"a", "m"}) {
		t.Errorf("ObjectIDs = %v", ids)
	}
}

func TestValidateLabels(t *testing.T) {
	cases := []struct {
		name  string
		names []string
		err   error
	}{
		{"none", nil, nil},
		{"valid", []string{"a", "b c"}, nil},
		{"one invalid", []string{"a", "b/c"}, storage.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := ValidateLabels(c.names, storage.ValidateTagName); !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("err = %v; want %v", err, c.err)
			}
		})
	}
}
