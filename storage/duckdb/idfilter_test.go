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

func TestBlockBloomMeetsItsFalsePositiveRate(t *testing.T) {
	for _, tc := range []struct {
		falseRate float64
		keys      int
	}{
		{1e-2, 20_000},
		{1e-3, 100_000},
		{1e-4, 200_000},
	} {
		t.Run(fmt.Sprint(tc.falseRate), func(t *testing.T) {
			f := newIDFilterSized(uint(tc.keys), tc.falseRate)
			for i := range tc.keys {
				f.add("e/p", fmt.Sprint(i))
			}
			if len(f.stages) != 1 {
				t.Fatalf("%d stages for keys within capacity", len(f.stages))
			}
			probes := int(100 / tc.falseRate)
			falsePositives := 0
			for i := range probes {
				if f.mayContain("e/q", fmt.Sprint(i)) {
					falsePositives++
				}
			}
			// The layout is computed for a full filter; allow for sampling.
			if rate := float64(falsePositives) / float64(probes); rate > 1.4*tc.falseRate {
				t.Errorf("false-positive rate %.2g at capacity, want about %.2g", rate, tc.falseRate)
			}
		})
	}
}

func TestBlockLayout(t *testing.T) {
	for _, tc := range []struct {
		falseRate        float64
		minBits, maxBits float64
	}{
		{1e-2, 9, 12},  // a classic filter needs 9.6
		{1e-6, 36, 44}, // 28.8
	} {
		bitsPerKey, k := blockLayout(tc.falseRate)
		if bitsPerKey < tc.minBits || bitsPerKey > tc.maxBits || k < 4 || k > 32 {
			t.Errorf("falseRate %g: %.1f bits per key, %d bits set; want %.0f-%.0f bits", tc.falseRate, bitsPerKey, k, tc.minBits, tc.maxBits)
		}
	}
}

// BenchmarkIDFilter times what the writer does per stored call at 10M
// calls: test the key, then add it.
func BenchmarkIDFilter(b *testing.B) {
	f := newIDFilter(0)
	keys := make([]string, 10_000_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15)
	}
	for _, k := range keys[:len(keys)-100_000] {
		f.add("bench/p", k)
	}
	b.ResetTimer()
	for i := range b.N {
		k := keys[len(keys)-100_000+i%100_000]
		if !f.mayContain("bench/p", k) {
			f.add("bench/p", k)
		}
	}
}
