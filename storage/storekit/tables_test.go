package storekit

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

func TestPrepareRow(t *testing.T) {
	cases := []struct {
		name, raw, dump string
		err             error
	}{
		{"keeps key order and Python separators", `{"b":1,"a":[1,2]}`, `{"b": 1, "a": [1, 2]}`, nil},
		{"leading space", ` {"a": 1}`, `{"a": 1}`, nil},
		{"Infinity kept as compact JSON", `{"a": 1e999}`, `{"a":1e999}`, nil},
		{"array", `[1]`, "", storage.ErrInvalidArgument},
		{"string", `"x"`, "", storage.ErrInvalidArgument},
		{"empty", ``, "", storage.ErrInvalidArgument},
		{"broken object", `{"a":`, "", storage.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := PrepareRow(json.RawMessage(c.raw))
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("err = %v; want %v", err, c.err)
			}
			if err == nil && p.Dump != c.dump {
				t.Errorf("dump = %s; want %s", p.Dump, c.dump)
			}
		})
	}
}

// TestPrepareRowDigestIgnoresKeyOrder: the digest is of the sorted-keys
// text, so rows differing only in key order are one row.
func TestPrepareRowDigestIgnoresKeyOrder(t *testing.T) {
	a, errA := PrepareRow(json.RawMessage(`{"a": 1, "b": 2}`))
	b, errB := PrepareRow(json.RawMessage(`{"b": 2, "a": 1}`))
	if errA != nil || errB != nil || a.Digest != b.Digest || a.Dump == b.Dump {
		t.Errorf("got %+v, %+v (%v, %v); want one digest, two texts", a, b, errA, errB)
	}
}

func TestPrepareTable(t *testing.T) {
	rows := []json.RawMessage{json.RawMessage(`{"a": 1}`), json.RawMessage(`{"a": 2}`)}
	good, err := PrepareTable(storage.TableSchemaForInsert{ProjectID: "e/p", Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	if good.Digest != digest.TableDigest(good.RowDigests) || len(good.Rows) != 2 {
		t.Fatalf("got %+v", good)
	}
	wrong := "nope"
	cases := []struct {
		name string
		in   storage.TableSchemaForInsert
		err  error
	}{
		{"no project", storage.TableSchemaForInsert{Rows: rows}, storage.ErrInvalidArgument},
		{"bad row", storage.TableSchemaForInsert{ProjectID: "e/p", Rows: []json.RawMessage{json.RawMessage(`1`)}}, storage.ErrInvalidArgument},
		{"digest differs", storage.TableSchemaForInsert{ProjectID: "e/p", Rows: rows, ExpectedDigest: &wrong}, storage.ErrConflict},
		{"digest matches", storage.TableSchemaForInsert{ProjectID: "e/p", Rows: rows, ExpectedDigest: &good.Digest}, nil},
		{"empty table", storage.TableSchemaForInsert{ProjectID: "e/p"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := PrepareTable(c.in); !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("err = %v; want %v", err, c.err)
			}
		})
	}
}

func TestUniqueRows(t *testing.T) {
	rows := []PreparedRow{{"b", "1"}, {"a", "2"}, {"b", "3"}}
	if got := UniqueRows(rows); !slices.Equal(got, []PreparedRow{{"b", "1"}, {"a", "2"}}) {
		t.Errorf("UniqueRows = %v", got)
	}
	if len(rows) != 3 || rows[2].Dump != "3" {
		t.Errorf("input changed: %v", rows)
	}
}

func TestPlanTableUpdate(t *testing.T) {
	type row = json.RawMessage
	r1, _ := PrepareRow(row(`{"n": 1}`))
	base := []string{"x", "y"}
	cases := []struct {
		name    string
		found   bool
		updates []storage.TableUpdateSpec
		list    []string
		touched []string
		err     error
	}{
		{"append", true, []storage.TableUpdateSpec{{Append: &storage.TableAppend{Row: row(`{"n": 1}`)}}},
			[]string{"x", "y", r1.Digest}, []string{r1.Digest}, nil},
		{"insert at 0", true, []storage.TableUpdateSpec{{Insert: &storage.TableInsert{Index: 0, Row: row(`{"n": 1}`)}}},
			[]string{r1.Digest, "x", "y"}, []string{r1.Digest}, nil},
		{"insert at end", true, []storage.TableUpdateSpec{{Insert: &storage.TableInsert{Index: 2, Row: row(`{"n": 1}`)}}},
			[]string{"x", "y", r1.Digest}, []string{r1.Digest}, nil},
		{"pop then pop", true, []storage.TableUpdateSpec{{Pop: &storage.TablePop{Index: 0}}, {Pop: &storage.TablePop{Index: 0}}},
			[]string{}, []string{"x", "y"}, nil},
		{"no updates", true, nil, []string{"x", "y"}, []string{}, nil},
		{"pop out of range", true, []storage.TableUpdateSpec{{Pop: &storage.TablePop{Index: 2}}}, nil, nil, storage.ErrInvalidArgument},
		{"insert out of range", true, []storage.TableUpdateSpec{{Insert: &storage.TableInsert{Index: 3, Row: row(`{}`)}}}, nil, nil, storage.ErrInvalidArgument},
		{"nothing set", true, []storage.TableUpdateSpec{{}}, nil, nil, storage.ErrInvalidArgument},
		{"two set", true, []storage.TableUpdateSpec{{Pop: &storage.TablePop{}, Append: &storage.TableAppend{Row: row(`{}`)}}}, nil, nil, storage.ErrInvalidArgument},
		{"bad row", true, []storage.TableUpdateSpec{{Append: &storage.TableAppend{Row: row(`[]`)}}}, nil, nil, storage.ErrInvalidArgument},
		{"base not stored", false, nil, nil, nil, storage.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := storage.TableUpdateReq{ProjectID: "e/p", BaseDigest: "t", Updates: c.updates}
			u, err := PlanTableUpdate(req, slices.Clone(base), c.found)
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("err = %v; want %v", err, c.err)
			}
			if err == nil && (!slices.Equal(u.RowDigests, c.list) || !slices.Equal(u.Res.UpdatedRowDigests, c.touched) ||
				u.Res.Digest != digest.TableDigest(c.list)) {
				t.Errorf("got %+v; want list %v, touched %v", u, c.list, c.touched)
			}
		})
	}
}

// TestPlanTableUpdateKeepsBase: the base list is never changed in place.
func TestPlanTableUpdateKeepsBase(t *testing.T) {
	base := []string{"x", "y"}
	_, err := PlanTableUpdate(storage.TableUpdateReq{Updates: []storage.TableUpdateSpec{{Pop: &storage.TablePop{Index: 0}}}}, base, true)
	if err != nil || !slices.Equal(base, []string{"x", "y"}) {
		t.Errorf("base = %v (%v)", base, err)
	}
}

func TestTableFromDigests(t *testing.T) {
	rows := []string{"a", "b"}
	want := digest.TableDigest(rows)
	wrong := "nope"
	cases := []struct {
		name     string
		expected *string
		err      error
	}{
		{"no expectation", nil, nil},
		{"matching", &want, nil},
		{"differing", &wrong, storage.ErrConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := TableFromDigests(storage.TableCreateFromDigestsReq{RowDigests: rows, ExpectedDigest: c.expected})
			if d != want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("got %s, %v; want %s, %v", d, err, want, c.err)
			}
		})
	}
}
