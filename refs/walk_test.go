package refs

import (
	"encoding/json"
	"testing"
)

func mustParse(t *testing.T, s string) Ref {
	t.Helper()
	r, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWalk(t *testing.T) {
	const val = `{"a": {"b": [10, 20, {"c": "deep"}]}, "dup": 1, "dup": 2, "n": null,
		"rows": "weave:///e/p/table/t1", "model": "weave:///e/p/object/m:d/attr/cfg", "call": "weave:///e/p/call/c"}`
	tests := []struct {
		name    string
		path    string // extra path of a ref on object o:d
		want    string // compact JSON of Val; "" for nil
		next    string // Next.String(), "" for none
		restLen int
	}{
		{"whole value", "", `{"a":{"b":[10,20,{"c":"deep"}]},"dup":1,"dup":2,"n":null,"rows":"weave:///e/p/table/t1","model":"weave:///e/p/object/m:d/attr/cfg","call":"weave:///e/p/call/c"}`, "", 0},
		{"key then index", "/key/a/attr/b/index/2/key/c", `"deep"`, "", 0},
		{"negative index", "/key/a/key/b/index/-3", `10`, "", 0},
		{"index too negative", "/key/a/key/b/index/-4", "", "", 0},
		{"index out of range", "/key/a/key/b/index/3", "", "", 0},
		{"missing key", "/key/zzz", "", "", 0},
		{"key on list", "/key/a/key/b/key/0", "", "", 0},
		{"index on object", "/key/a/index/0", "", "", 0},
		{"last repeated key wins", "/key/dup", `2`, "", 0},
		{"explicit null", "/key/n", `null`, "", 0},
		{"past null", "/key/n/key/x", "", "", 0},
		{"id without table ref", "/key/a/id/r1", "", "", 0},
		{"ref as final value", "/key/rows", `"weave:///e/p/table/t1"`, "", 0},
		{"table ref then row", "/attr/rows/id/r1/key/q", "", "weave:///e/p/table/t1", 2},
		{"object ref mid-path", "/attr/model/key/temperature", "", "weave:///e/p/object/m:d/attr/cfg", 1},
		{"call ref mid-path", "/key/call/key/x", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, "weave:///e/p/object/o:d"+tt.path)
			step := Walk(json.RawMessage(val), r.Extra)
			got := ""
			if step.Val != nil {
				b, err := json.Marshal(step.Val)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			if got != tt.want {
				t.Errorf("Val = %s, want %s", got, tt.want)
			}
			next := ""
			if step.Next != nil {
				next = step.Next.String()
			}
			if next != tt.next || len(step.Rest) != tt.restLen {
				t.Errorf("Next = %q rest %d, want %q rest %d", next, len(step.Rest), tt.next, tt.restLen)
			}
		})
	}
}

func TestStepPathJoinsNestedExtra(t *testing.T) {
	r := mustParse(t, "weave:///e/p/object/o:d/attr/model/key/temperature")
	step := Walk(json.RawMessage(`{"model": "weave:///e/p/object/m:d/attr/cfg"}`), r.Extra)
	path := step.Path()
	want := []Edge{{EdgeAttr, "cfg"}, {EdgeKey, "temperature"}}
	if len(path) != len(want) || path[0] != want[0] || path[1] != want[1] {
		t.Fatalf("Path = %+v, want %+v", path, want)
	}
	if (Step{Val: json.RawMessage(`1`)}).Path() != nil {
		t.Fatal("a finished step has no path")
	}
}
