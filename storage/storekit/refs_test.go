package storekit

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

// fakeRefs serves ref targets from maps and records what was asked.
type fakeRefs struct {
	objs, rows map[RefKey]json.RawMessage
	err        error
	asked      [][]RefKey
}

func (f *fakeRefs) ObjectValues(_ context.Context, keys []RefKey) (map[RefKey]json.RawMessage, error) {
	f.asked = append(f.asked, keys)
	return f.objs, f.err
}

func (f *fakeRefs) RowValues(_ context.Context, keys []RefKey) (map[RefKey]json.RawMessage, error) {
	f.asked = append(f.asked, keys)
	return f.rows, f.err
}

// testDigest is a 43-character content digest made of c.
func testDigest(c string) string { return strings.Repeat(c, 43) }

// refFixture stores objects in two projects, one pointing at another and
// one at a table row.
func refFixture() (*fakeRefs, map[string]string) {
	d := map[string]string{"a": testDigest("a"), "b": testDigest("b"), "ptr": testDigest("p"), "row": testDigest("r")}
	tbl := strings.Repeat("f", 64)
	return &fakeRefs{
		objs: map[RefKey]json.RawMessage{
			{Project: "e/p", Name: "m", Digest: d["a"]}:         json.RawMessage(`{"v": "a", "n": [1, 2]}`),
			{Project: "e/q", Name: "m", Digest: d["b"]}:         json.RawMessage(`{"v": "b"}`),
			{Project: "e/p", Name: "pointer", Digest: d["ptr"]}: json.RawMessage(`{"to": "weave:///e/p/object/m:` + d["a"] + `"}`),
			{Project: "e/p", Name: "ds", Digest: d["ptr"]}:      json.RawMessage(`{"rows": "weave:///e/p/table/` + tbl + `"}`),
		},
		rows: map[RefKey]json.RawMessage{{Project: "e/p", Digest: d["row"]}: json.RawMessage(`{"row": "r"}`)},
	}, d
}

func TestReadRefs(t *testing.T) {
	loader, d := refFixture()
	dA, dB, dPtr, dRow := d["a"], d["b"], d["ptr"], d["row"]
	canRead := func(p string) bool { return p != "e/secret" }
	cases := []struct {
		name, uri, want string
	}{
		{"object", "weave:///e/p/object/m:" + dA, `{"v": "a", "n": [1, 2]}`},
		{"path into object", "weave:///e/p/object/m:" + dA + "/key/n/index/1", `2`},
		{"other project", "weave:///e/q/object/m:" + dB, `{"v": "b"}`},
		{"digest of another project", "weave:///e/p/object/m:" + dB, ``},
		{"through a ref", "weave:///e/p/object/pointer:" + dPtr + "/key/to/key/v", `"a"`},
		{"into a table row", "weave:///e/p/object/ds:" + dPtr + "/key/rows/id/" + dRow + "/key/row", `"r"`},
		{"unreadable project", "weave:///e/secret/object/m:" + dA, ``},
		{"missing", "weave:///e/p/object/gone:" + dA, ``},
	}
	uris := make([]string, len(cases))
	for i, c := range cases {
		uris[i] = c.uri
	}
	vals, err := ReadRefs(context.Background(), loader, canRead, uris)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if string(vals[i]) != c.want {
				t.Errorf("%s = %s; want %s", c.uri, vals[i], c.want)
			}
		})
	}
	for _, keys := range loader.asked {
		if !slices.IsSortedFunc(keys, compareRefKeys) || len(slices.CompactFunc(slices.Clone(keys), func(a, b RefKey) bool { return a == b })) != len(keys) {
			t.Errorf("loader asked for %v; want sorted keys without repeats", keys)
		}
	}
}

func TestReadRefsRefusals(t *testing.T) {
	d := testDigest("a")
	cases := map[string][]string{
		"not a ref":         {"nope"},
		"table ref":         {"weave:///e/p/table/" + strings.Repeat("f", 64)},
		"call ref":          {"weave:///e/p/call/abc"},
		"latest":            {"weave:///e/p/object/m:latest"},
		"version index":     {"weave:///e/p/object/m:v0"},
		"too many in batch": slices.Repeat([]string{"weave:///e/p/object/m:" + d}, storage.MaxRefsPerReadBatch+1),
	}
	for name, uris := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ReadRefs(context.Background(), &fakeRefs{}, func(string) bool { return true }, uris)
			if !errors.Is(err, storage.ErrInvalidArgument) {
				t.Errorf("err = %v; want ErrInvalidArgument", err)
			}
		})
	}
}

func TestReadRefsLoaderError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadRefs(context.Background(), &fakeRefs{err: boom}, func(string) bool { return true },
		[]string{"weave:///e/p/object/m:" + testDigest("a")})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v; want the loader's error", err)
	}
}

// TestReadRefsHopLimit: a hand-made cycle ends as null after MaxRefHops.
func TestReadRefsHopLimit(t *testing.T) {
	d := testDigest("c")
	self := "weave:///e/p/object/loop:" + d + "/key/next"
	loader := &fakeRefs{objs: map[RefKey]json.RawMessage{{Project: "e/p", Name: "loop", Digest: d}: json.RawMessage(`{"next": "` + self + `"}`)}}
	vals, err := ReadRefs(context.Background(), loader, func(string) bool { return true }, []string{self + "/key/x"})
	if err != nil {
		t.Fatal(err)
	}
	if vals[0] != nil || len(loader.asked) != MaxRefHops {
		t.Errorf("got %s after %d fetches; want null after %d", vals[0], len(loader.asked), MaxRefHops)
	}
}
