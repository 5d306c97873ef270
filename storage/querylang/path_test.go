package querylang

import (
	"reflect"
	"testing"
)

func TestSplitPath(t *testing.T) {
	tests := []struct {
		in   string
		want []Segment
	}{
		{"inputs", []Segment{{Key: "inputs"}}},
		{"output.metrics.run", []Segment{{Key: "output"}, {Key: "metrics"}, {Key: "run"}}},
		{`output.metrics\.run`, []Segment{{Key: "output"}, {Key: "metrics.run"}}},
		{`output.a\.b\.c.d`, []Segment{{Key: "output"}, {Key: "a.b.c"}, {Key: "d"}}},
		{"inputs.messages.0.content", []Segment{{Key: "inputs"}, {Key: "messages"}, {Key: "0", IsIndex: true}, {Key: "content"}}},
		{"a.12", []Segment{{Key: "a"}, {Key: "12", IsIndex: true, Index: 12}}},
		{"a.01", []Segment{{Key: "a"}, {Key: "01"}}},
		{"a.-1", []Segment{{Key: "a"}, {Key: "-1"}}},
		{"a.9999999999", []Segment{{Key: "a"}, {Key: "9999999999"}}},
		{`a\b.c`, []Segment{{Key: `a\b`}, {Key: "c"}}},
		{"a..b", []Segment{{Key: "a"}, {Key: ""}, {Key: "b"}}},
		{"", []Segment{{Key: ""}}},
		{`a\`, []Segment{{Key: `a\`}}},
	}
	for _, tt := range tests {
		got := SplitPath(tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitPath(%q) = %+v; want %+v", tt.in, got, tt.want)
		}
	}
}

func TestJoinPathInvertsSplit(t *testing.T) {
	for _, in := range []string{"a.b", `a\.b.c`, "x.0.y", "a..b"} {
		if got := JoinPath(SplitPath(in)); got != in {
			t.Errorf("JoinPath(SplitPath(%q)) = %q", in, got)
		}
	}
}
