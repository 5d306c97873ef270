package refs

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestParseAndString(t *testing.T) {
	tests := []struct {
		uri  string
		want Ref
	}{
		{"weave:///acme/demo/object/demo-config:L6FDDACYKqV8VIILzjVobLzmqehhCT0XcEfAE4lykYc", Ref{
			Scheme: SchemeWeave, ProjectID: "acme/demo", Kind: KindObject,
			Name: "demo-config", Version: "L6FDDACYKqV8VIILzjVobLzmqehhCT0XcEfAE4lykYc"}},
		{"weave:///acme/demo/op/Evaluation.evaluate:8e7q", Ref{
			Scheme: SchemeWeave, ProjectID: "acme/demo", Kind: KindOp, Name: "Evaluation.evaluate", Version: "8e7q"}},
		{"weave:///e/p/object/ds:abc/attr/rows/id/rowdigest", Ref{
			Scheme: SchemeWeave, ProjectID: "e/p", Kind: KindObject, Name: "ds", Version: "abc",
			Extra: []Edge{{EdgeAttr, "rows"}, {EdgeID, "rowdigest"}}}},
		{"weave:///e/p/object/o:v1/key/a%2Fb%20c/index/-2/key/%C3%BC", Ref{
			Scheme: SchemeWeave, ProjectID: "e/p", Kind: KindObject, Name: "o", Version: "v1",
			Extra: []Edge{{EdgeKey, "a/b c"}, {EdgeIndex, "-2"}, {EdgeKey, "ü"}}}},
		{"weave:///acme/demo/table/404fb12bd4ead65170701df6a54dfa6be5525fed88033c93f9347cd2f1b4df46", Ref{
			Scheme: SchemeWeave, ProjectID: "acme/demo", Kind: KindTable,
			Digest: "404fb12bd4ead65170701df6a54dfa6be5525fed88033c93f9347cd2f1b4df46"}},
		{"weave:///e/p/call/0195a1b2-c3d4", Ref{Scheme: SchemeWeave, ProjectID: "e/p", Kind: KindCall, ID: "0195a1b2-c3d4"}},
		{"weave:///e/p/call/c1/attr/x", Ref{Scheme: SchemeWeave, ProjectID: "e/p", Kind: KindCall, ID: "c1",
			Extra: []Edge{{EdgeAttr, "x"}}}},
		{"weave-trace-internal:///UHJvamVjdDox/object/o:d/key/k", Ref{
			Scheme: SchemeInternal, ProjectID: "UHJvamVjdDox", Kind: KindObject, Name: "o", Version: "d",
			Extra: []Edge{{EdgeKey, "k"}}}},
		{"wandb-artifact:///e/p/model:v3", Ref{Scheme: SchemeArtifact, ProjectID: "e/p", Kind: KindArtifact, ID: "model:v3"}},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			got, err := Parse(tt.uri)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse =\n%+v\nwant\n%+v", got, tt.want)
			}
			if s := got.String(); s != tt.uri {
				t.Fatalf("String = %s, want %s", s, tt.uri)
			}
			if got.Scheme != SchemeArtifact && !IsRef(tt.uri) {
				t.Fatalf("IsRef(%s) = false", tt.uri)
			}
		})
	}
}

func TestParseTrailingSlashIsNoExtra(t *testing.T) {
	r, err := Parse("weave:///e/p/object/o:d/")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Extra) != 0 || r.String() != "weave:///e/p/object/o:d" {
		t.Fatalf("got %+v printing %s", r, r.String())
	}
}

func TestParseRejects(t *testing.T) {
	for _, uri := range []string{
		"", "weave://e/p/object/o:d", "http:///e/p/object/o:d", "weave:///e/p",
		"weave:///e/p/object", "weave:///e/p/object/", "weave:///e/p/object/o",
		"weave:///e/p/object/o:", "weave:///e/p/object/:d", "weave:///e/p/object/o:d:x",
		"weave:///e/p/object/o:d/key", "weave:///e/p/object/o:d/bogus/1",
		"weave:///e/p/object/o:d/index/one", "weave:///e/p/object/o:d/index/1__0",
		"weave:///e/p/table/", "weave:///e/p/table/a:b", "weave:///e/p/table/d/id/x",
		"weave:///e/p/widget/x", "weave:////p/object/o:d", "weave:///e//object/o:d",
		"weave:///e/p/call/", "weave:///e/p/call/c/attr", "weave-trace-internal:///p/object",
		"wandb-artifact:///e/p", "wandb-artifact:///e/p/a/b", "weave:///\xff/p/object/o:d",
	} {
		if _, err := Parse(uri); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) err = %v, want ErrInvalid", uri, err)
		}
	}
}

func TestIsRef(t *testing.T) {
	tests := map[string]bool{
		"weave:///e/p/object/o:d":      true,
		"weave-trace-internal:///p/op": true, // interpreted as a ref even if it does not parse
		"wandb-artifact:///e/p/a":      false,
		"weave://e/p":                  false,
		"hello":                        false,
	}
	for s, want := range tests {
		if got := IsRef(s); got != want {
			t.Errorf("IsRef(%q) = %v, want %v", s, got, want)
		}
	}
}

// Expected values are Python's urllib.parse.quote(s, safe="") and unquote.
func TestQuoteUnquoteMatchPython(t *testing.T) {
	quotes := map[string]string{
		"a/b": "a%2Fb", "key with space": "key%20with%20space", "ü": "%C3%BC", "~._-": "~._-",
		"100%": "100%25", "a:b": "a%3Ab", "😀": "%F0%9F%98%80", "?&=#+": "%3F%26%3D%23%2B",
	}
	for in, want := range quotes {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
		if back := Unquote(want); back != in {
			t.Errorf("Unquote(%q) = %q, want %q", want, back, in)
		}
	}
	unquotes := map[string]string{
		"%zz": "%zz", "%": "%", "%2": "%2", "a%20b": "a b", "%FF": "\uFFFD", "%41%42": "AB", "%c3%bc": "ü",
	}
	for in, want := range unquotes {
		if got := Unquote(in); got != want {
			t.Errorf("Unquote(%q) = %q, want %q", in, got, want)
		}
	}
}

// Expected values follow Python's int() on the same strings.
func TestParseIndex(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {" 1", 1, true}, {"+1", 1, true}, {"-1", -1, true}, {"1_0", 10, true},
		{"007", 7, true}, {"1__0", 0, false}, {"_1", 0, false}, {"1_", 0, false}, {"", 0, false},
		{"0x1", 0, false}, {"1.0", 0, false}, {"-", 0, false},
		{"99999999999999999999999", math.MaxInt64, true},
	}
	for _, tt := range tests {
		got, ok := ParseIndex(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseIndex(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
