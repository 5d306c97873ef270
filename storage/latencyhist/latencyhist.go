// Package latencyhist is the latency histogram that chart rollups keep
// per minute: whole milliseconds counted in bins that are exact below
// ExactBelow and 1/SubBins of an octave wide above it, so histograms of
// any minutes merge by adding counts and quantiles read from the merged
// histogram are within half a bin (under 0.4%) of the exact ones.
//
// The bin of a value is one rule with two renderings, Bin in Go and
// BinSQL in SQL; the tests hold them to each other on a real engine.
package latencyhist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// SubBins is how many bins share an octave above ExactBelow.
const SubBins = 128

// ExactBelow is the magnitude under which every millisecond has a bin.
const ExactBelow = 2 * SubBins

// subShift is log2(SubBins).
const subShift = 7

// Bin is the bin of a latency of v ms. Bins are ordered as their values:
// a negative latency (an end stamped before its start) gets the negated
// bin of its magnitude.
func Bin(v int64) int32 {
	if v < 0 {
		if v == math.MinInt64 {
			v++
		}
		return -Bin(-v)
	}
	if v < ExactBelow {
		return int32(v)
	}
	shift := 63 - bits.LeadingZeros64(uint64(v)) - subShift
	return int32(SubBins*shift) + int32(v>>shift)
}

// span is the range of magnitudes [lo, lo+width) of bin b >= 0.
func span(b int32) (lo, width float64) {
	if b < ExactBelow {
		return float64(b), 1
	}
	shift := int(b)/SubBins - 1
	m := int64(b) - int64(SubBins*shift)
	return math.Ldexp(float64(m), shift), math.Ldexp(1, shift)
}

// BinSQL renders Bin of the BIGINT expression v in SQL (DuckDB), NULL
// when v is NULL. The octave comes from floor(log2()), corrected by one
// either way where the float rounds across a power of two.
func BinSQL(v string) string {
	a := "abs(" + v + ")"
	guess := "(CAST(floor(log2(greatest(" + a + ", 1))) AS INTEGER) - " + strconv.Itoa(subShift) + ")"
	shift := "(" + guess + " + CASE WHEN (" + a + " >> " + guess + ") >= " + strconv.Itoa(ExactBelow) +
		" THEN 1 WHEN (" + a + " >> " + guess + ") < " + strconv.Itoa(SubBins) + " THEN -1 ELSE 0 END)"
	return "CASE WHEN " + v + " IS NULL THEN NULL WHEN " + a + " < " + strconv.Itoa(ExactBelow) + " THEN CAST(" + v + " AS INTEGER)" +
		" ELSE CAST(sign(" + v + ") * (" + strconv.Itoa(SubBins) + " * " + shift + " + (" + a + " >> " + shift + ")) AS INTEGER) END"
}

// Entry is one bin of a histogram: how many latencies fell in it and
// their sum, which places a bin's one value exactly.
type Entry struct {
	Bin   int32
	Count int64
	Sum   int64
}

// Histogram is a latency histogram. Its bins are kept dense from the
// lowest to the highest non-empty one, so adding a minute's histogram to
// a bucket's is a pass over arrays (a day's chart adds some thousands).
type Histogram struct {
	lo     int32   // the bin of counts[0]
	counts []int64 // per bin from lo; 0 = empty
	sums   []int64
}

// Add counts n latencies of bin b summing to sum. Bins may come in any
// order; adding a bin twice adds to it.
func (h *Histogram) Add(b int32, n, sum int64) {
	if n <= 0 {
		return
	}
	h.cover(b)
	i := b - h.lo
	h.counts[i] += n
	h.sums[i] += sum
}

// cover grows the arrays to hold bin b.
func (h *Histogram) cover(b int32) {
	switch {
	case len(h.counts) == 0:
		h.lo, h.counts, h.sums = b, make([]int64, 1, 64), make([]int64, 1, 64)
	case b < h.lo:
		grow := int(h.lo - b)
		h.counts = append(make([]int64, grow, grow+len(h.counts)), h.counts...)
		h.sums = append(make([]int64, grow, grow+len(h.sums)), h.sums...)
		h.lo = b
	case int(b-h.lo) >= len(h.counts):
		grow := int(b-h.lo) + 1 - len(h.counts)
		h.counts = append(h.counts, make([]int64, grow)...)
		h.sums = append(h.sums, make([]int64, grow)...)
	}
}

// Merge adds every bin of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if len(o.counts) == 0 {
		return
	}
	h.cover(o.lo)
	h.cover(o.lo + int32(len(o.counts)) - 1)
	off := int(o.lo - h.lo)
	for i, n := range o.counts {
		h.counts[off+i] += n
		h.sums[off+i] += o.sums[i]
	}
}

// Entries returns the non-empty bins in order.
func (h *Histogram) Entries() []Entry {
	var out []Entry
	for i, n := range h.counts {
		if n > 0 {
			out = append(out, Entry{Bin: h.lo + int32(i), Count: n, Sum: h.sums[i]})
		}
	}
	return out
}

// Count is how many latencies h holds.
func (h *Histogram) Count() int64 {
	var n int64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// Sum is the latencies added up: exact, as every bin keeps its sum.
func (h *Histogram) Sum() int64 {
	var sum int64
	for _, s := range h.sums {
		sum += s
	}
	return sum
}

// Quantile is the q-quantile of the latencies, linearly interpolated
// between the two closest ranks as DuckDB's quantile_cont and
// ClickHouse's quantileExact interpolation do; ok is false when h is
// empty. A rank's value is exact in a bin one millisecond wide or holding
// one latency; otherwise the bin's latencies are taken as spread evenly
// over it.
func (h *Histogram) Quantile(q float64) (float64, bool) {
	n := h.Count()
	if n == 0 {
		return 0, false
	}
	pos := q * float64(n-1)
	lo := int64(math.Floor(pos))
	v := h.rank(lo)
	if frac := pos - float64(lo); frac > 0 && lo+1 < n {
		v += frac * (h.rank(lo+1) - v)
	}
	return v, true
}

// rank is the estimated value of the r-th smallest latency (from 0).
func (h *Histogram) rank(r int64) float64 {
	for i, n := range h.counts {
		if r >= n { // empty bins (n = 0) pass too
			r -= n
			continue
		}
		if n == 1 {
			return float64(h.sums[i])
		}
		b := h.lo + int32(i)
		if b < 0 { // magnitudes descend as values ascend
			lo, w := span(-b)
			return -spread(lo, w, n-1-r, n)
		}
		lo, w := span(b)
		return spread(lo, w, r, n)
	}
	return 0 // r >= Count: not reached by Quantile
}

// spread places the k-th of n integer latencies spread evenly over the
// bin [lo, lo+w).
func spread(lo, w float64, k, n int64) float64 {
	if w == 1 {
		return lo
	}
	return lo - 0.5 + (float64(k)+0.5)*w/float64(n)
}

// maxEncodedEntries bounds the bins Decode accepts: more than every bin
// of every int64 latency is no histogram this package wrote.
const maxEncodedEntries = 2 * (ExactBelow + SubBins*64)

// Encode appends h's compact form to dst: the bin count, then per bin its
// distance from the previous bin, its count and its sum, as varints.
func (h *Histogram) Encode(dst []byte) []byte {
	entries := h.Entries()
	dst = binary.AppendUvarint(dst, uint64(len(entries)))
	prev := int64(math.MinInt32) - 1
	for _, e := range entries {
		dst = binary.AppendUvarint(dst, uint64(int64(e.Bin)-prev))
		dst = binary.AppendVarint(dst, e.Count)
		dst = binary.AppendVarint(dst, e.Sum)
		prev = int64(e.Bin)
	}
	return dst
}

// errCorrupt is every Decode failure.
var errCorrupt = errors.New("latency histogram: corrupt encoding")

// maxSpan bounds the bins between the lowest and highest of a histogram
// Decode accepts, so a corrupt one cannot make it allocate much: every
// int64 latency, negative or not, has a bin within it.
const maxSpan = 2 * (ExactBelow + SubBins*64)

// Decode reads a histogram Encode wrote, refusing anything else: bins out
// of order or range, counts that are not positive, trailing bytes.
func Decode(src []byte) (Histogram, error) {
	var h Histogram
	if err := h.AddEncoded(src); err != nil {
		return Histogram{}, err
	}
	return h, nil
}

// AddEncoded adds the histogram Encode wrote in src to h, in one pass (a
// chart adds thousands); when src is not one, it returns an error and h
// holds some of src, to be dropped.
func (h *Histogram) AddEncoded(src []byte) error {
	return walk(src, func(e Entry) { h.Add(e.Bin, e.Count, e.Sum) })
}

// walk calls each with src's bins in order, up to the first that shows
// src is not what Encode writes.
func walk(src []byte, each func(Entry)) error {
	n, k := binary.Uvarint(src)
	if k <= 0 || n > maxEncodedEntries {
		return errCorrupt
	}
	src = src[k:]
	prev, first := int64(math.MinInt32)-1, int64(0)
	for i := range n {
		d, k := binary.Uvarint(src)
		if k <= 0 || d == 0 || d > math.MaxUint32 {
			return errCorrupt
		}
		src = src[k:]
		count, k := binary.Varint(src)
		if k <= 0 || count <= 0 {
			return errCorrupt
		}
		src = src[k:]
		sum, k := binary.Varint(src)
		if k <= 0 {
			return errCorrupt
		}
		src = src[k:]
		b := prev + int64(d)
		if i == 0 {
			first = b
		}
		if b > math.MaxInt32 || b-first >= maxSpan {
			return errCorrupt
		}
		each(Entry{Bin: int32(b), Count: count, Sum: sum})
		prev = b
	}
	if len(src) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(src))
	}
	return nil
}
