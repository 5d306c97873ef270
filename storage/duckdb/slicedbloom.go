package duckdb

import "math"

// slicedBloom is one blocked Bloom filter per slice of a locator run,
// laid out block-major: the blocks a key can fall in, one per slice, sit
// side by side, so testing a key against every slice of a run reads one
// short stretch of memory instead of one line per slice scattered over
// the heap.
type slicedBloom struct {
	blocks  []bloomBlock // perSlice blocks of slices filters, block-major
	slices  int
	k       uint32
	perEach int // blocks per slice
}

// newSlicedBloom builds the filters of keys, a set of hashes per slice,
// each sized for the largest set with bitsPerKey and k bits per key (a
// blockLayout, which is too slow to compute for every run).
func newSlicedBloom(keys []map[uint64]struct{}, bitsPerKey float64, k uint32) *slicedBloom {
	largest := 1
	for _, set := range keys {
		largest = max(largest, len(set))
	}
	per := max(int(math.Ceil(float64(largest)*bitsPerKey/blockBits)), 1)
	f := &slicedBloom{blocks: make([]bloomBlock, per*len(keys)), slices: len(keys), k: k, perEach: per}
	for s, set := range keys {
		for h := range set {
			f.blocks[blockIndex(h, per)*f.slices+s].set(h, k)
		}
	}
	return f
}

// matching calls yield with each slice whose filter may hold h, in order.
func (f *slicedBloom) matching(h uint64, yield func(slice int)) {
	row := f.blocks[blockIndex(h, f.perEach)*f.slices:][:f.slices]
	for s := range row {
		if row[s].has(h, f.k) {
			yield(s)
		}
	}
}

// bytes is the filter's size in memory.
func (f *slicedBloom) bytes() int { return len(f.blocks) * blockBits / 8 }
