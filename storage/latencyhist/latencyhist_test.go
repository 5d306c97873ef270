package latencyhist

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBinBoundsHoldTheirValues(t *testing.T) {
	values := []int64{0, 1, 127, 128, 255, 256, 257, 511, 512, 513, 1000, 4095, 4096, 86_400_000, 1 << 40, 1 << 62}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		values = append(values, rng.Int64N(1<<uint(rng.IntN(62)+1)))
	}
	for _, v := range values {
		b := Bin(v)
		lo, w := span(b)
		if f := float64(v); f < lo || f >= lo+w {
			t.Fatalf("Bin(%d) = %d spanning [%v, %v), which does not hold it", v, b, lo, lo+w)
		}
		if v >= ExactBelow && w > float64(v)/SubBins {
			t.Fatalf("Bin(%d) is %v wide, over 1/%d of the value", v, w, SubBins)
		}
		if Bin(-v) != -b {
			t.Fatalf("Bin(%d) = %d, want %d", -v, Bin(-v), -b)
		}
	}
	for v := int64(-3000); v < 3000; v++ {
		if Bin(v+1) < Bin(v) {
			t.Fatalf("bins out of order at %d: %d then %d", v, Bin(v), Bin(v+1))
		}
	}
}

// exactQuantile is quantile_cont over sorted values.
func exactQuantile(sorted []int64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	v := float64(sorted[lo])
	if lo+1 < len(sorted) {
		v += (pos - float64(lo)) * float64(sorted[lo+1]-sorted[lo])
	}
	return v
}

func TestQuantileIsWithinHalfABinOfTheExactOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name   string
		values func() []int64
		exact  bool // every quantile exact
	}{
		{"three small", func() []int64 { return []int64{100, 200, 300} }, true},
		{"one value", func() []int64 { return []int64{123456} }, true},
		{"under the exact bound", func() []int64 {
			v := make([]int64, 500)
			for i := range v {
				v[i] = rng.Int64N(ExactBelow)
			}
			return v
		}, true},
		{"exponential", func() []int64 {
			v := make([]int64, 20_000)
			for i := range v {
				v[i] = 50 + int64(rng.ExpFloat64()*800)
			}
			return v
		}, false},
		{"wide and negative", func() []int64 {
			v := make([]int64, 5_000)
			for i := range v {
				v[i] = rng.Int64N(1<<30) - 1<<20
			}
			return v
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			values := tc.values()
			var h Histogram
			// Half the values in one histogram, half in another, merged:
			// as minutes are.
			var other Histogram
			for i, v := range values {
				if i%2 == 0 {
					h.Add(Bin(v), 1, v)
				} else {
					other.Add(Bin(v), 1, v)
				}
			}
			h.Merge(&other)
			slices.Sort(values)
			for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.95, 0.99, 1} {
				got, ok := h.Quantile(q)
				want := exactQuantile(values, q)
				if !ok {
					t.Fatalf("q%v: no quantile", q)
				}
				tol := 1e-9
				if !tc.exact {
					tol = math.Max(math.Abs(want)/SubBins, 1)
				}
				if math.Abs(got-want) > tol {
					t.Errorf("q%v = %v, want %v within %v", q, got, want, tol)
				}
			}
		})
	}
	var empty Histogram
	if _, ok := empty.Quantile(0.5); ok {
		t.Error("an empty histogram has a quantile")
	}
}

func TestAddAndMergeKeepBinsInOrder(t *testing.T) {
	var a, b Histogram
	for _, e := range []Entry{{5, 1, 5}, {1, 2, 2}, {300, 1, 601}, {5, 1, 5}, {-7, 1, -7}, {2, 0, 0}} {
		a.Add(e.Bin, e.Count, e.Sum)
	}
	b.Add(1, 1, 1)
	b.Add(400, 3, 1500)
	a.Merge(&b)
	want := []Entry{{-7, 1, -7}, {1, 3, 3}, {5, 2, 10}, {300, 1, 601}, {400, 3, 1500}}
	if !slices.Equal(a.Entries(), want) {
		t.Errorf("entries = %v, want %v", a.Entries(), want)
	}
	if a.Count() != 10 {
		t.Errorf("count = %d, want 10", a.Count())
	}
}

func TestEncodeDecodeRoundTrips(t *testing.T) {
	var h Histogram
	for _, v := range []int64{-1 << 40, -3, 0, 7, 255, 256, 99_999, math.MaxInt64} {
		h.Add(Bin(v), 2, 2*v)
	}
	got, err := Decode(h.Encode(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Entries(), h.Entries()) {
		t.Errorf("decoded %v, want %v", got.Entries(), h.Entries())
	}
	empty, err := Decode((&Histogram{}).Encode(nil))
	if err != nil || len(empty.Entries()) != 0 {
		t.Errorf("empty: %v, %v", empty.Entries(), err)
	}
}

func TestDecodeRefusesWhatEncodeNeverWrites(t *testing.T) {
	var h Histogram
	h.Add(10, 1, 10)
	good := h.Encode(nil)
	for name, b := range map[string][]byte{
		"empty":          {},
		"trailing bytes": append(slices.Clone(good), 0),
		"cut short":      good[:len(good)-1],
		"zero step":      {2, 1, 2, 20, 0, 2, 20},
		"zero count":     {1, 1, 0, 0},
		"too many bins":  {0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func FuzzDecode(f *testing.F) {
	var h Histogram
	h.Add(Bin(300), 4, 1210)
	h.Add(Bin(-5), 1, -5)
	f.Add(h.Encode(nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(got.Encode(nil))
		if err != nil || !slices.Equal(again.Entries(), got.Entries()) {
			t.Fatalf("re-encoding changed %v to %v (%v)", got.Entries(), again.Entries(), err)
		}
		for i := 1; i < len(got.Entries()); i++ {
			if got.Entries()[i].Bin <= got.Entries()[i-1].Bin {
				t.Fatalf("bins out of order: %v", got.Entries())
			}
		}
		got.Quantile(0.5)
	})
}
