package jsontext

import (
	"strings"
	"testing"
)

func TestTooDeep(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name  string
		doc   string
		limit int
		want  bool
	}{
		{"flat", `{"a":1}`, 1, false},
		{"at the limit", deep(3), 3, false},
		{"past the limit", deep(4), 3, true},
		{"objects and arrays alike", `{"a":[{"b":[1]}]}`, 3, true},
		{"siblings are not depth", `[[1],[2],[3],[4]]`, 2, false},
		{"brackets in strings", `["[[[[", "\"[[[[", {"k[[[[":"]]]]"}]`, 2, false},
		{"escaped backslash before a quote", `["\\", [[1]]]`, 2, true},
		{"5000 levels", deep(5000), MaxValueDepth, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TooDeep([]byte(tc.doc), tc.limit); got != tc.want {
				t.Fatalf("TooDeep(%.40s, %d) = %v, want %v", tc.doc, tc.limit, got, tc.want)
			}
		})
	}
}
