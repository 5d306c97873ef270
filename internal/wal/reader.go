package wal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Reader reads records in order while the log is being appended to, so a
// consumer can work through the backlog from disk instead of keeping it in
// memory. It reads only records the caller knows are complete (Append has
// returned them), up to the sequence number given to Next. A Reader is
// used by one goroutine.
type Reader struct {
	l    *Log
	f    *os.File
	r    *bufio.Reader
	next uint64
	buf  []byte
}

// NewReader returns a reader positioned after sequence number after.
func (l *Log) NewReader(after uint64) *Reader {
	return &Reader{l: l, next: after + 1}
}

// Next returns the next record if its sequence number is at most upTo, or
// io.EOF. The payload is valid until the following call.
func (r *Reader) Next(upTo uint64) (uint64, []byte, error) {
	if r.next > upTo {
		return 0, nil, io.EOF
	}
	for {
		if r.f == nil {
			if err := r.open(); err != nil {
				return 0, nil, err
			}
		}
		seq, payload, err := r.read()
		if err == nil {
			if seq != r.next {
				return 0, nil, fmt.Errorf("wal: read record %d, expected %d", seq, r.next)
			}
			r.next++
			return seq, payload, nil
		}
		if !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
		// The segment ended before the record: it is in the next one.
		_ = r.f.Close()
		r.f = nil
	}
}

// open opens the segment holding r.next and skips to it.
func (r *Reader) open() error {
	path, first, ok := r.l.segmentFor(r.next)
	if !ok {
		return fmt.Errorf("wal: no segment holds record %d", r.next)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	r.f, r.r = f, bufio.NewReaderSize(f, 1<<20)
	for seq := first; seq < r.next; seq++ {
		if _, _, err := r.read(); err != nil {
			return fmt.Errorf("wal: skipping to record %d in %s: %w", r.next, path, err)
		}
	}
	return nil
}

func (r *Reader) read() (uint64, []byte, error) {
	seq, payload, err := readFrame(r.r, r.buf)
	r.buf = payload
	if err != nil && err != io.EOF {
		return 0, nil, fmt.Errorf("wal: %w", err)
	}
	return seq, payload, err
}

// Close releases the open segment.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// segmentFor finds the segment whose records include seq.
func (l *Log) segmentFor(seq uint64) (path string, first uint64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.segs) - 1; i >= 0; i-- {
		if s := l.segs[i]; s.first <= seq {
			return s.path, s.first, true
		}
	}
	return "", 0, false
}
