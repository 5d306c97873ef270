package duckdb

import (
	"fmt"
	"testing"
)

func TestIDFilterGrowsWithoutLosingKeys(t *testing.T) {
	tests := []struct {
		name       string
		capacity   uint
		keys       int
		wantStages int
	}{
		{"within capacity", 1000, 1000, 1},
		{"one key over", 1000, 1001, 2},
		{"ten times over", 1000, 10_000, 4}, // 1000+2000+4000+8000 keys of room
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newIDFilterSized(tc.capacity, 1e-4)
			for i := range tc.keys {
				f.add("e/p", fmt.Sprint(i))
			}
			if len(f.stages) != tc.wantStages {
				t.Errorf("%d stages, want %d", len(f.stages), tc.wantStages)
			}
			for i := range tc.keys {
				if !f.mayContain("e/p", fmt.Sprint(i)) {
					t.Fatalf("key %d added but not found", i)
				}
			}
			falsePositives := 0
			const probes = 200_000
			for i := range probes {
				if f.mayContain("e/q", fmt.Sprint(i)) {
					falsePositives++
				}
			}
			// Each stage halves the rate of the one before: the chain stays
			// under twice the first stage's 1e-4.
			if rate := float64(falsePositives) / probes; rate > 3e-4 {
				t.Errorf("false-positive rate %.5f, want under 3e-4", rate)
			}
		})
	}
}
