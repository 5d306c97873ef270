package duckdb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/weftdev/weft/internal/atomicfile"
)

// The id filter and the locator are rebuilt at open from every stored
// call's keys: a minute at 39M calls. A clean Close saves them instead,
// and the next Open loads the file when it still describes the calls
// table (see callKeysEpoch in callkeys.go).
//
// The file is a header (magic, format version, the epoch it was saved
// in), the id filter, the locator, and a checksum of all that. Numbers are
// little-endian; every count is checked against the bytes left before
// anything is allocated for it, so a damaged file is refused, not trusted
// and not a reason to run out of memory.

// KeysFileName is the snapshot of the call keys inside the data directory.
const KeysFileName = "callkeys.snapshot"

// keySnapshotMagic opens the file; keySnapshotVersion is its format.
const (
	keySnapshotMagic   = "weft call keys\n"
	keySnapshotVersion = 1
)

// errKeySnapshot marks a snapshot that cannot be used; the store then
// rebuilds the keys from the table.
var errKeySnapshot = errors.New("call keys snapshot unusable")

// writeKeySnapshot saves f and l, as of epoch, to path, whole or not at
// all (atomicfile).
func writeKeySnapshot(path, epoch string, f *idFilter, l *callLocator) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		e := newSnapshotEncoder(w)
		e.str(keySnapshotMagic)
		e.u64(keySnapshotVersion)
		e.str(epoch)
		e.filter(f)
		l.mu.RLock()
		e.locator(l)
		l.mu.RUnlock()
		return e.finish()
	})
	if err != nil {
		return fmt.Errorf("save call keys: %w", err)
	}
	return nil
}

// readKeySnapshot loads the filter and locator saved at path when they
// were saved in epoch with the layout of the empty locator layout (runs,
// slices and filter sizes); errKeySnapshot wraps every reason they cannot
// be used.
func readKeySnapshot(path, epoch string, layout *callLocator) (*idFilter, *callLocator, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errKeySnapshot, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errKeySnapshot, err)
	}
	f, l, err := decodeKeySnapshot(file, info.Size(), epoch, layout)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errKeySnapshot, err)
	}
	return f, l, nil
}

// decodeKeySnapshot reads a snapshot of size bytes from r.
func decodeKeySnapshot(r io.Reader, size int64, epoch string, layout *callLocator) (*idFilter, *callLocator, error) {
	const trailer = 8
	if size < trailer {
		return nil, nil, errors.New("truncated")
	}
	d := newSnapshotDecoder(r, size-trailer)
	if d.str(len(keySnapshotMagic)) != keySnapshotMagic {
		return nil, nil, errors.New("not a call keys snapshot")
	}
	if v := d.u64(); v != keySnapshotVersion {
		return nil, nil, fmt.Errorf("format %d, want %d", v, keySnapshotVersion)
	}
	if got := d.str(256); d.err == nil && got != epoch {
		return nil, nil, fmt.Errorf("saved in epoch %q, the calls table is in %q", got, epoch)
	}
	f := d.filter()
	l := d.locator(layout)
	if d.err != nil {
		return nil, nil, d.err
	}
	if d.left != 0 {
		return nil, nil, fmt.Errorf("%d bytes after the locator", d.left)
	}
	sum := d.hash.Sum64()
	var stored [trailer]byte
	if _, err := io.ReadFull(d.r, stored[:]); err != nil {
		return nil, nil, fmt.Errorf("checksum: %w", err)
	}
	if binary.LittleEndian.Uint64(stored[:]) != sum {
		return nil, nil, errors.New("checksum mismatch")
	}
	return f, l, nil
}

// snapshotEncoder writes the snapshot's numbers and hashes them; the
// first error sticks.
type snapshotEncoder struct {
	w    *bufio.Writer
	hash *xxh3.Hasher
	out  io.Writer
	buf  [8]byte
	err  error
}

func newSnapshotEncoder(w io.Writer) *snapshotEncoder {
	e := &snapshotEncoder{w: bufio.NewWriterSize(w, 1<<20), hash: xxh3.New()}
	e.out = io.MultiWriter(e.w, e.hash)
	return e
}

func (e *snapshotEncoder) write(b []byte) {
	if e.err == nil {
		_, e.err = e.out.Write(b)
	}
}

func (e *snapshotEncoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.write(e.buf[:])
}

func (e *snapshotEncoder) i64(v int64)   { e.u64(uint64(v)) }
func (e *snapshotEncoder) f64(v float64) { e.u64(math.Float64bits(v)) }

func (e *snapshotEncoder) flag(b bool) {
	var v uint64
	if b {
		v = 1
	}
	e.u64(v)
}

func (e *snapshotEncoder) str(s string) {
	e.u64(uint64(len(s)))
	e.write([]byte(s))
}

func (e *snapshotEncoder) blocks(bs []bloomBlock) {
	e.u64(uint64(len(bs)))
	buf := make([]byte, 0, 64*1024)
	for i := range bs {
		for _, w := range bs[i] {
			buf = binary.LittleEndian.AppendUint64(buf, w)
		}
		if len(buf) == cap(buf) {
			e.write(buf)
			buf = buf[:0]
		}
	}
	e.write(buf)
}

func (e *snapshotEncoder) set(keys map[uint64]struct{}) {
	e.u64(uint64(len(keys)))
	for k := range keys {
		e.u64(k)
	}
}

func (e *snapshotEncoder) span(t timeSpan) {
	e.flag(t.set)
	e.flag(t.unbounded)
	e.i64(t.lo.Unix())
	e.i64(int64(t.lo.Nanosecond()))
	e.i64(t.hi.Unix())
	e.i64(int64(t.hi.Nanosecond()))
}

func (e *snapshotEncoder) spans(ts []timeSpan) {
	e.u64(uint64(len(ts)))
	for _, t := range ts {
		e.span(t)
	}
}

func (e *snapshotEncoder) sliced(f *slicedBloom) {
	e.u64(uint64(f.slices))
	e.u64(uint64(f.k))
	e.u64(uint64(f.perEach))
	e.blocks(f.blocks)
}

func (e *snapshotEncoder) filter(f *idFilter) {
	e.u64(f.keys.seed)
	e.u64(uint64(f.count))
	e.u64(uint64(f.capacity))
	e.f64(f.falseRate)
	e.u64(uint64(len(f.stages)))
	for _, s := range f.stages {
		e.u64(uint64(s.k))
		e.blocks(s.blocks)
	}
}

func (e *snapshotEncoder) locator(l *callLocator) {
	e.u64(l.keys.seed)
	e.u64(uint64(l.runParts))
	e.u64(uint64(l.sliceSize))
	e.u64(uint64(len(l.runs)))
	for _, r := range l.runs {
		e.sliced(r.calls)
		e.sliced(r.traces)
		e.spans(r.spans)
	}
	e.u64(uint64(l.open.parts))
	e.u64(uint64(len(l.open.spans)))
	for i := range l.open.spans {
		e.set(l.open.calls[i])
		e.set(l.open.traces[i])
		e.span(l.open.spans[i])
	}
	e.flag(l.startless.overflow)
	e.set(l.startless.keys)
}

// finish writes the checksum and flushes.
func (e *snapshotEncoder) finish() error {
	if e.err != nil {
		return e.err
	}
	binary.LittleEndian.PutUint64(e.buf[:], e.hash.Sum64())
	if _, err := e.w.Write(e.buf[:]); err != nil {
		return err
	}
	return e.w.Flush()
}

// snapshotDecoder reads what snapshotEncoder wrote, hashing it, with
// left the bytes before the checksum not read yet; the first error sticks
// and later reads return zeros.
type snapshotDecoder struct {
	r    *bufio.Reader
	hash *xxh3.Hasher
	left int64
	buf  []byte
	err  error
}

func newSnapshotDecoder(r io.Reader, body int64) *snapshotDecoder {
	return &snapshotDecoder{r: bufio.NewReaderSize(r, int(min(1<<20, body+8))), hash: xxh3.New(), left: body, buf: make([]byte, 64*1024)}
}

// read returns the next n bytes (n at most len(d.buf)), nil after an error.
func (d *snapshotDecoder) read(n int) []byte {
	if d.err != nil {
		return nil
	}
	if int64(n) > d.left {
		d.err = errors.New("truncated")
		return nil
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.err = fmt.Errorf("read: %w", err)
		return nil
	}
	d.left -= int64(n)
	d.hash.Write(b)
	return b
}

func (d *snapshotDecoder) u64() uint64 {
	b := d.read(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *snapshotDecoder) i64() int64   { return int64(d.u64()) }
func (d *snapshotDecoder) f64() float64 { return math.Float64frombits(d.u64()) }
func (d *snapshotDecoder) flag() bool   { return d.u64() == 1 }

// count reads a count of items of size bytes each, refusing one that
// the bytes left cannot hold.
func (d *snapshotDecoder) count(size int64) int {
	n := d.u64()
	if d.err == nil && n > uint64(d.left/size) {
		d.err = fmt.Errorf("a count of %d does not fit the %d bytes left", n, d.left)
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

// small reads a number that must not exceed limit.
func (d *snapshotDecoder) small(limit uint64) int {
	n := d.u64()
	if d.err == nil && n > limit {
		d.err = fmt.Errorf("%d is over %d", n, limit)
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

// hashes reads a filter's number of hash positions per key.
func (d *snapshotDecoder) hashes() uint32 {
	k := d.small(64)
	if d.err == nil && k == 0 {
		d.err = errors.New("a filter of no hash positions")
	}
	return uint32(k)
}

func (d *snapshotDecoder) str(limit int) string {
	n := d.count(1)
	if n > limit {
		d.err = fmt.Errorf("a string of %d bytes", n)
	}
	b := d.read(n)
	return string(b)
}

func (d *snapshotDecoder) blocks() []bloomBlock {
	n := d.count(blockBits / 8)
	bs := make([]bloomBlock, n)
	per := len(d.buf) / (blockBits / 8)
	for i := 0; i < n && d.err == nil; i += per {
		m := min(per, n-i)
		b := d.read(m * blockBits / 8)
		for j := 0; j < m && b != nil; j++ {
			for w := range bs[i+j] {
				bs[i+j][w] = binary.LittleEndian.Uint64(b[(j*blockWords+w)*8:])
			}
		}
	}
	return bs
}

func (d *snapshotDecoder) set() map[uint64]struct{} {
	n := d.count(8)
	if n == 0 {
		return nil
	}
	keys := make(map[uint64]struct{}, n)
	for range n {
		keys[d.u64()] = struct{}{}
	}
	return keys
}

func (d *snapshotDecoder) span() timeSpan {
	t := timeSpan{set: d.flag(), unbounded: d.flag()}
	lo, loNanos, hi, hiNanos := d.i64(), d.i64(), d.i64(), d.i64()
	if t.set {
		t.lo, t.hi = time.Unix(lo, loNanos).UTC(), time.Unix(hi, hiNanos).UTC()
	}
	return t
}

func (d *snapshotDecoder) spans() []timeSpan {
	n := d.count(6 * 8)
	ts := make([]timeSpan, n)
	for i := range ts {
		ts[i] = d.span()
	}
	return ts
}

func (d *snapshotDecoder) sliced() *slicedBloom {
	f := &slicedBloom{slices: d.small(math.MaxInt32), k: d.hashes(), perEach: d.small(math.MaxInt32)}
	f.blocks = d.blocks()
	if d.err == nil && (f.perEach < 1 || len(f.blocks) != f.perEach*f.slices) {
		d.err = fmt.Errorf("a sliced filter of %d blocks for %d slices of %d", len(f.blocks), f.slices, f.perEach)
	}
	return f
}

func (d *snapshotDecoder) filter() *idFilter {
	f := &idFilter{keys: keyHash{seed: d.u64()}}
	f.count, f.capacity, f.falseRate = uint(d.u64()), uint(d.u64()), d.f64()
	n := d.count(8)
	for range n {
		s := &blockBloom{k: d.hashes()}
		s.blocks = d.blocks()
		if d.err == nil && len(s.blocks) == 0 {
			d.err = errors.New("an id filter stage without blocks")
		}
		f.stages = append(f.stages, s)
	}
	if d.err == nil && (len(f.stages) == 0 || f.count > f.capacity || !(f.falseRate > 0 && f.falseRate < 1)) {
		d.err = errors.New("an id filter out of shape")
	}
	return f
}

func (d *snapshotDecoder) locator(layout *callLocator) *callLocator {
	l := &callLocator{keys: keyHash{seed: d.u64()}, runParts: layout.runParts, sliceSize: layout.sliceSize,
		bitsPerKey: layout.bitsPerKey, k: layout.k}
	if parts, size := d.u64(), d.u64(); d.err == nil && (parts != uint64(l.runParts) || size != uint64(l.sliceSize)) {
		d.err = fmt.Errorf("locator runs of %d parts in slices of %d, want %d and %d", parts, size, l.runParts, l.sliceSize)
	}
	slices := (l.runParts + l.sliceSize - 1) / l.sliceSize
	n := d.count(8)
	for i := 0; i < n && d.err == nil; i++ {
		r := &sealedRun{calls: d.sliced(), traces: d.sliced(), spans: d.spans()}
		if d.err == nil && (r.calls.slices != len(r.spans) || r.traces.slices != len(r.spans) || len(r.spans) != slices) {
			d.err = errors.New("a locator run out of shape")
		}
		l.seal(r)
	}
	l.open.parts = d.small(uint64(l.runParts - 1))
	open := d.small(uint64(slices))
	for i := 0; i < open && d.err == nil; i++ {
		l.open.calls = append(l.open.calls, d.set())
		l.open.traces = append(l.open.traces, d.set())
		l.open.spans = append(l.open.spans, d.span())
	}
	if d.err == nil && open != (l.open.parts+l.sliceSize-1)/l.sliceSize {
		d.err = fmt.Errorf("an open run of %d parts in %d slices", l.open.parts, open)
	}
	for i := range l.open.calls { // record adds to the last slice's sets
		if l.open.calls[i] == nil {
			l.open.calls[i] = map[uint64]struct{}{}
		}
		if l.open.traces[i] == nil {
			l.open.traces[i] = map[uint64]struct{}{}
		}
	}
	l.startless.overflow = d.flag()
	l.startless.keys = d.set()
	return l
}
