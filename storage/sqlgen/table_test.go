package sqlgen

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

func mustParseTable(t testing.TB, q string) querylang.Expr {
	t.Helper()
	e, err := querylang.Parse(json.RawMessage(q))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func scopedTable(where querylang.Expr) TableQuery {
	return TableQuery{Scope: []TableScope{{Column: "project_id", Value: "e/p"}}, Where: where}
}

func TestTableUserValuesAreBound(t *testing.T) {
	hostile := `x'); DROP TABLE feedback; --`
	q := scopedTable(mustParseTable(t, `{"$expr":{"$and":[
		{"$eq":[{"$getField":"payload.`+strings.ReplaceAll(hostile, `"`, `\"`)+`"},{"$literal":"`+hostile+`"}]},
		{"$contains":{"input":{"$getField":"creator"},"substr":{"$literal":"`+hostile+`"}}}]}}`))
	q.Fields = []string{"id", "payload." + hostile}
	q.SortBy = []storage.SortBy{{Field: "payload." + hostile, Direction: "desc"}}
	st, outs, err := TableSelect(NewDuckDB(), FeedbackTable(), q)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(st.SQL, "DROP") || strings.Contains(st.SQL, "e/p") {
		t.Fatalf("a user value reached the SQL text: %s", st.SQL)
	}
	if len(outs) != 2 || outs[1].Key != "payload."+hostile || outs[1].Kind != OutString {
		t.Fatalf("outputs %+v", outs)
	}
	if !strings.HasPrefix(st.SQL, "SELECT ") || !strings.Contains(st.SQL, "WHERE project_id = ") {
		t.Fatalf("the scope must come first in WHERE: %s", st.SQL)
	}
}

func TestTableRejects(t *testing.T) {
	cases := map[string]TableQuery{
		"unknown field":       {Fields: []string{"secret"}},
		"empty fields":        {Fields: []string{}},
		"count with others":   {Fields: []string{"COUNT(*)", "id"}},
		"path into non-json":  {Fields: []string{"creator.x"}},
		"unknown sort":        {SortBy: []storage.SortBy{{Field: "nope", Direction: "asc"}}},
		"bad direction":       {SortBy: []storage.SortBy{{Field: "id", Direction: "ascending"}}},
		"negative limit":      {Limit: tablePtr(int64(-1))},
		"negative offset":     {Offset: -3},
		"unknown query field": {Where: mustParseTable(t, `{"$expr":{"$eq":[{"$getField":"x"},{"$literal":1}]}}`)},
		"container literal":   {Where: mustParseTable(t, `{"$expr":{"$eq":[{"$getField":"id"},{"$literal":[{"$literal":1}]}]}}`)},
		"numeric needle":      {Where: mustParseTable(t, `{"$expr":{"$contains":{"input":{"$getField":"id"},"substr":{"$literal":1}}}}`)},
	}
	for name, q := range cases {
		q.Scope = []TableScope{{Column: "project_id", Value: "e/p"}}
		if _, _, err := TableSelect(NewDuckDB(), FeedbackTable(), q); !errors.Is(err, storage.ErrInvalidArgument) {
			t.Errorf("%s: err %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, _, err := TableSelect(NewDuckDB(), FeedbackTable(), TableQuery{}); err == nil {
		t.Error("a query without scope was rendered")
	}
}

func tablePtr[T any](v T) *T { return &v }

func TestTableCountIgnoresPaging(t *testing.T) {
	q := scopedTable(nil)
	q.Fields, q.Limit, q.Offset = []string{"count(*)"}, tablePtr(int64(5)), 10
	q.SortBy = []storage.SortBy{{Field: "id", Direction: "asc"}}
	st, outs, err := TableSelect(NewDuckDB(), FeedbackTable(), q)
	if err != nil || len(outs) != 1 || outs[0].Kind != OutCount || strings.Contains(st.SQL, "LIMIT") || strings.Contains(st.SQL, "ORDER") {
		t.Fatalf("count(*) select %q %+v %v", st.SQL, outs, err)
	}
	c, err := TableCount(NewDuckDB(), FeedbackTable(), q)
	if err != nil || strings.Contains(c.SQL, "LIMIT") || len(c.Args) != 1 {
		t.Fatalf("count %q %v %v", c.SQL, c.Args, err)
	}
}

func TestTableTimeLiterals(t *testing.T) {
	for _, lit := range []string{`"2025-03-04T05:06:07Z"`, `1741064767`, `1741064767.5`, `"2025-03-04"`} {
		q := scopedTable(mustParseTable(t, `{"$expr":{"$gt":[{"$getField":"created_at"},{"$literal":`+lit+`}]}}`))
		st, _, err := TableSelect(NewDuckDB(), FeedbackTable(), q)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := st.Args[len(st.Args)-1].(time.Time); !ok {
			t.Errorf("literal %s bound as %T, want a time", lit, st.Args[len(st.Args)-1])
		}
	}
	q := scopedTable(mustParseTable(t, `{"$expr":{"$gt":[{"$getField":"created_at"},{"$literal":"soon"}]}}`))
	st, _, err := TableSelect(NewDuckDB(), FeedbackTable(), q)
	if err != nil || !strings.Contains(st.SQL, sqlNullBool) {
		t.Fatalf("a non-datetime literal must never match: %q %v", st.SQL, err)
	}
}

func TestTableRowJSON(t *testing.T) {
	outs := []Output{{"s", OutString}, {"t", OutTime}, {"f", OutFloat}, {"j", OutJSON}, {"n", OutString}, {"c", OutCount}, {"b", OutString}}
	vals := []any{"a<b", time.Date(2025, 1, 2, 3, 4, 5, 600000000, time.UTC), 0.25, `{"k":[1,2]}`, nil, int64(7), []byte("raw")}
	got, err := TableRowJSON(outs, vals)
	want := `{"s":"a\u003cb","t":"2025-01-02T03:04:05.600000Z","f":0.25,"j":{"k":[1,2]},"n":null,"c":7,"b":"raw"}`
	if err != nil || string(got) != want {
		t.Fatalf("TableRowJSON = %s, %v\nwant %s", got, err, want)
	}
	if _, err := TableRowJSON([]Output{{"j", OutJSON}}, []any{"{broken"}); err == nil {
		t.Fatal("invalid stored JSON was embedded")
	}
}

func FuzzTableSelect(f *testing.F) {
	f.Add(`{"$expr":{"$eq":[{"$getField":"payload.a"},{"$literal":1}]}}`, "payload.a.b", "desc")
	f.Add(`{"$expr":{"$in":[{"$getField":"created_at"},[{"$literal":"2024-01-01"},{"$literal":null}]]}}`, "count(*)", "ASC")
	f.Add(`{"$expr":{"$not":[{"$contains":{"input":{"$convert":{"input":{"$getField":"payload"},"to":"string"}},"substr":{"$literal":"x"}}}]}}`, "id", "x")
	f.Fuzz(func(t *testing.T, query, field, dir string) {
		where, err := querylang.Parse(json.RawMessage(query))
		if err != nil {
			return
		}
		q := scopedTable(where)
		q.Fields = []string{field}
		q.SortBy = []storage.SortBy{{Field: field, Direction: dir}}
		st, outs, err := TableSelect(NewDuckDB(), FeedbackTable(), q)
		if err != nil {
			if !errors.Is(err, storage.ErrInvalidArgument) {
				t.Fatalf("error %v is not a bad-input error", err)
			}
			return
		}
		if len(outs) != 1 || !tablePlaceholdersMatch(st) {
			t.Fatalf("statement %q binds %d args with outputs %+v", st.SQL, len(st.Args), outs)
		}
	})
}

// tablePlaceholdersMatch checks that the statement uses exactly $1..$len(args).
func tablePlaceholdersMatch(st Statement) bool {
	for i := 1; i <= len(st.Args)+1; i++ {
		used := strings.Contains(st.SQL, "$"+strconv.Itoa(i)+" ")
		if used != (i <= len(st.Args)) {
			return false
		}
	}
	return true
}
