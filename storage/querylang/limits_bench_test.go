package querylang

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLimitsParse times checking the hostile query shapes against
// the default limits: at each limit (accepted, the whole document parsed)
// and as sent in the wild (refused). The store took from seconds to
// minutes to run the refused ones; checking them takes microseconds to a
// few milliseconds.
func BenchmarkLimitsParse(b *testing.B) {
	d := DefaultLimits()
	in := func(n int) string {
		return `{"$expr":{"$in":[{"$getField":"inputs.model"},[` + repeat(`{"$literal":"9f1c2b7e-0d3a-4e59-8a61-3c4d5e6f7a8b"}`, n) + `]]}}`
	}
	docs := []struct {
		name   string
		doc    string
		accept bool
	}{
		{"at limit/and 100 operands", hostile.and(d.MaxOperands), true},
		{"at limit/in 1000 elements", in(d.MaxInList), true},
		{"at limit/2000 nodes", nodesDoc(d.MaxNodes), true},
		{"at limit/64 KiB string", hostile.str(d.MaxStringBytes), true},
		{"at limit/64 path segments", hostile.segments(d.MaxPathSegments), true},
		{"at limit/256 KiB document", hostile.padded(d.MaxQueryBytes), true},
		{"at limit/2000 nodes of object literals", objectsDoc(d.MaxNodes), true},
		{"refused/and 8000 operands (456 KB)", hostile.and(8000), false},
		{"refused/or 101 operands", hostile.or(d.MaxOperands + 1), false},
		{"refused/in 4000 elements (220 KB)", in(4000), false},
		{"refused/in 1001 elements", in(d.MaxInList + 1), false},
		{"refused/in 100000 elements (5.4 MB)", in(100_000), false},
		{"refused/4000 nodes", nodesDoc(2 * d.MaxNodes), false},
		{"refused/1 MiB string", hostile.str(1 << 20), false},
		{"refused/65 KiB string", hostile.str(d.MaxStringBytes + 1), false},
		{"refused/65 path segments", hostile.segments(d.MaxPathSegments + 1), false},
		{"refused/100000 path segments", hostile.segments(100_000), false},
	}
	for _, tc := range docs {
		raw := json.RawMessage(tc.doc)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				_, err := d.Parse(raw)
				if (err == nil) != tc.accept {
					b.Fatalf("accepted %v: %v", err == nil, err)
				}
			}
		})
	}
	for _, n := range []int{d.MaxSortKeys, 200, 100_000} {
		fields := make([]string, n)
		for i := range fields {
			fields[i] = fmt.Sprintf("inputs.k%d.%s", i, strings.Repeat("a.", 10))
		}
		b.Run(fmt.Sprintf("sort_by/%d keys", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				err := d.CheckSort(fields)
				if (err == nil) != (n <= d.MaxSortKeys) {
					b.Fatalf("%d keys: %v", n, err)
				}
			}
		})
	}
}
