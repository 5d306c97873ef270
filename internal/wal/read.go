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

// readFrame reads one record from r into buf, grown as needed. It returns
// io.EOF at a clean end and errTorn for a frame cut short, too long or
// failing its checksum. The payload aliases buf.
func readFrame(r *bufio.Reader, buf []byte) (seq uint64, payload []byte, err error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF {
			return 0, buf, io.EOF
		}
		return 0, buf, errTorn
	}
	n := binary.LittleEndian.Uint32(h[0:4])
	if n > maxRecordLen {
		return 0, buf, errTorn
	}
	payload = grow(buf, int(n))
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, payload, errTorn
	}
	if crc32.Update(crc32.Checksum(h[8:16], castagnoli), castagnoli, payload) != binary.LittleEndian.Uint32(h[4:8]) {
		return 0, payload, errTorn
	}
	return binary.LittleEndian.Uint64(h[8:16]), payload, nil
}

// scan checks a segment's records in order. It returns the last good
// sequence number and the offset just past it; err is errTorn where a bad
// frame begins.
func scan(path string, first uint64) (last uint64, validEnd int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	want := first
	var payload []byte
	for {
		var seq uint64
		seq, payload, err = readFrame(r, payload)
		switch {
		case err == io.EOF:
			return last, validEnd, nil
		case err != nil:
			return last, validEnd, err
		case seq != want:
			return last, validEnd, errTorn
		}
		last, want = seq, seq+1
		validEnd += headerSize + int64(len(payload))
	}
}

// grow returns a buffer of length n, reusing b when it is large enough.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}
