package refs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestExtractRefs(t *testing.T) {
	const obj = "weave:///acme/demo/object/demo-dataset:xztWWTKHNts4Tu7Hn8Wi39ksTF4kSbAroKDKaly8X84"
	const op = "weave:///acme/demo/op/exactMatch:pGqAfSsPXDtQXDDQ3Y4sSnYEpWe8bYmHE0frs4ANgTA"
	tests := []struct {
		name string
		raw  string
		want []string
	}{
		{"none", `{"a": 1, "b": "text", "c": [true, null]}`, nil},
		{"nested values in order", `{"dataset": "` + obj + `", "scorers": ["` + op + `"], "x": {"y": ["` + obj + `"]}}`,
			[]string{obj, op}},
		{"keys are not values", `{"` + obj + `": 1}`, nil},
		{"key and value", `{"` + obj + `" : "` + op + `"}`, []string{op}},
		{"escaped slashes decode first", `["weave:\/\/\/acme\/demo\/op\/exactMatch:pGqAfSsPXDtQXDDQ3Y4sSnYEpWe8bYmHE0frs4ANgTA"]`, []string{op}},
		{"unparseable ref skipped", `["weave:///e/p/object/noversion", "weave:///e/p/table/t"]`, []string{"weave:///e/p/table/t"}},
		{"non-canonical encoding skipped", `["weave:///e/p/object/o:d/key/a b", "weave:///e/p/object/o:d/key/a%20b"]`,
			[]string{"weave:///e/p/object/o:d/key/a%20b"}},
		{"trailing slash skipped", `["weave:///e/p/object/o:d/"]`, nil},
		{"artifact and internal", `["wandb-artifact:///e/p/m:v1", "weave-trace-internal:///UHJv/call/c1"]`,
			[]string{"wandb-artifact:///e/p/m:v1", "weave-trace-internal:///UHJv/call/c1"}},
		{"bare string value", `"` + op + `"`, []string{op}},
		{"quotes inside strings", `{"a": "say \"weave:///e/p/call/x\"", "b": "weave:///e/p/call/y"}`,
			[]string{"weave:///e/p/call/y"}},
		{"malformed keeps earlier", `["weave:///e/p/call/x", "unterminated`, []string{"weave:///e/p/call/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ExtractRefs(json.RawMessage(tt.raw))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ExtractRefs = %q, want %q", got, tt.want)
			}
		})
	}
}

func BenchmarkExtractRefs(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"messages": [`)
	for i := range 50 {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(`{"role": "user", "content": "some fairly long text that is not a ref at all", "n": 12.5}`)
	}
	sb.WriteString(`], "model": "weave:///acme/demo/object/model:L6FDDACYKqV8VIILzjVobLzmqehhCT0XcEfAE4lykYc"}`)
	raw := json.RawMessage(sb.String())
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if len(ExtractRefs(raw)) != 1 {
			b.Fatal("want one ref")
		}
	}
}
