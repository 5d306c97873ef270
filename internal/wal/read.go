package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// errTorn marks a record that is cut short or fails its checksum.
var errTorn = errors.New("torn or corrupt record")

// Replay calls fn for every record with a sequence number above after, in
// order. It must not run concurrently with Append.
func (l *Log) Replay(after uint64, fn func(seq uint64, payload []byte) error) error {
	l.mu.Lock()
	segs := append([]segment(nil), l.segs...)
	l.mu.Unlock()
	for _, s := range segs {
		if s.last == 0 || s.last <= after {
			continue
		}
		_, _, err := scan(s.path, s.first, func(seq uint64, p []byte) error {
			if seq <= after {
				return nil
			}
			return fn(seq, p)
		})
		if err != nil {
			return fmt.Errorf("wal replay %s: %w", s.path, err)
		}
	}
	return nil
}

// scan reads a segment's records in order, checking each frame, and calls
// fn (when not nil) for each. It returns the last good sequence number and
// the offset just past it; err is errTorn where a bad frame begins.
func scan(path string, first uint64, fn func(uint64, []byte) error) (last uint64, validEnd int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	want := first
	var h [headerSize]byte
	var payload []byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if err == io.EOF {
				return last, validEnd, nil
			}
			return last, validEnd, errTorn
		}
		n := binary.LittleEndian.Uint32(h[0:4])
		seq := binary.LittleEndian.Uint64(h[8:16])
		if n > maxRecordLen || seq != want {
			return last, validEnd, errTorn
		}
		payload = grow(payload, int(n))
		if _, err := io.ReadFull(r, payload); err != nil {
			return last, validEnd, errTorn
		}
		if crc32.Update(crc32.Checksum(h[8:16], castagnoli), castagnoli, payload) != binary.LittleEndian.Uint32(h[4:8]) {
			return last, validEnd, errTorn
		}
		if fn != nil {
			if err := fn(seq, payload); err != nil {
				return last, validEnd, err
			}
		}
		last, want = seq, seq+1
		validEnd += headerSize + int64(n)
	}
}

// grow returns a buffer of length n, reusing b when it is large enough.
// Callers of Replay must copy what they keep.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}
