// Package wal is an append-only, segmented write-ahead log with group
// fsync: Append writes a group of records and syncs the file once for all
// of them, so many writers share one fsync; a Reader reads records back,
// following the appends or after a restart; TrimThrough drops the segments whose records have all
// been applied downstream. A torn record at the tail (a crash during a
// write, never acknowledged) is cut off on Open.
//
// On disk a segment is a file named after its first record's sequence
// number; each record is framed as length (uint32), CRC-32C (uint32) over
// the sequence number and payload, sequence number (uint64), payload.
//
// It imports nothing of Weft.
package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

const (
	headerSize   = 16
	segSuffix    = ".wal"
	maxRecordLen = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Options shape the log.
type Options struct {
	// SegmentBytes is the size past which a new segment file is started.
	SegmentBytes int64
}

// Log is an open write-ahead log. Its methods are safe for concurrent use.
type Log struct {
	dir  string
	opts Options

	mu   sync.Mutex
	f    *os.File // the segment being appended to
	size int64    // its size
	segs []segment
	next uint64 // sequence number of the next record
	buf  []byte
}

// segment is one file; last is 0 while it holds no record.
type segment struct {
	first, last uint64
	path        string
	size        int64
}

// Open opens (creating if needed) the log in dir.
func Open(dir string, opts Options) (*Log, error) {
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = 64 << 20
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("wal dir: %w", err)
	}
	l := &Log{dir: dir, opts: opts, next: 1}
	segs, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	for i := range segs {
		if err := l.recover(&segs[i], i == len(segs)-1); err != nil {
			return nil, err
		}
	}
	l.segs = segs
	if len(segs) > 0 {
		if s := segs[len(segs)-1]; s.last > 0 {
			l.next = s.last + 1
		} else {
			l.next = s.first
		}
		return l, l.openTail()
	}
	return l, l.startSegment()
}

// recover scans a segment, cutting a torn tail off the last one. A bad
// record anywhere else is corruption the log cannot repair by itself.
func (l *Log) recover(s *segment, tail bool) error {
	last, validEnd, err := scan(s.path, s.first)
	if err == nil {
		s.last, s.size = last, validEnd
		return nil
	}
	if !tail {
		return fmt.Errorf("wal segment %s is corrupt at byte %d (%w); move it aside to start without it", s.path, validEnd, err)
	}
	s.last, s.size = last, validEnd
	if terr := os.Truncate(s.path, validEnd); terr != nil {
		return fmt.Errorf("wal: cutting the torn tail of %s: %w", s.path, terr)
	}
	return nil
}

func listSegments(dir string) ([]segment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal dir: %w", err)
	}
	var segs []segment
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segSuffix)
		if !ok || e.IsDir() {
			continue
		}
		first, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		segs = append(segs, segment{first: first, path: filepath.Join(dir, e.Name())})
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].first < segs[j].first })
	return segs, nil
}

func (l *Log) openTail() error {
	s := l.segs[len(l.segs)-1]
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return errors.Join(fmt.Errorf("wal: %w", err), f.Close())
	}
	l.f, l.size = f, st.Size()
	return nil
}

// startSegment begins a new segment at l.next and syncs the directory so
// the file's existence survives a crash.
func (l *Log) startSegment() error {
	path := filepath.Join(l.dir, fmt.Sprintf("%020d%s", l.next, segSuffix))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("wal: new segment: %w", err)
	}
	if err := syncDir(l.dir); err != nil {
		return errors.Join(err, f.Close())
	}
	l.f, l.size = f, 0
	l.segs = append(l.segs, segment{first: l.next, path: path})
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("wal: sync dir: %w", err)
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// Append writes recs as consecutive records and syncs them to disk once.
// It returns the sequence number of the last one. On error nothing of the
// group is kept.
func (l *Log) Append(recs ...[]byte) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, errors.New("wal: closed")
	}
	if l.size >= l.opts.SegmentBytes {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	l.buf = l.buf[:0]
	seq := l.next
	for _, r := range recs {
		if len(r) > maxRecordLen {
			return 0, fmt.Errorf("wal: record of %d bytes is above the %d limit", len(r), maxRecordLen)
		}
		l.buf = appendRecord(l.buf, seq, r)
		seq++
	}
	if err := l.writeSynced(l.buf); err != nil {
		return 0, err
	}
	l.size += int64(len(l.buf))
	l.next = seq
	l.segs[len(l.segs)-1].last = seq - 1
	l.segs[len(l.segs)-1].size = l.size
	return seq - 1, nil
}

func (l *Log) writeSynced(b []byte) error {
	if _, err := l.f.Write(b); err != nil {
		_ = l.f.Truncate(l.size)
		return fmt.Errorf("wal write: %w", err)
	}
	if err := fdatasync(l.f); err != nil {
		_ = l.f.Truncate(l.size)
		return fmt.Errorf("wal sync: %w", err)
	}
	return nil
}

func appendRecord(b []byte, seq uint64, payload []byte) []byte {
	var h [headerSize]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[8:16], seq)
	crc := crc32.Update(crc32.Checksum(h[8:16], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:8], crc)
	b = append(b, h[:]...)
	return append(b, payload...)
}

func (l *Log) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("wal: closing segment: %w", err)
	}
	l.f = nil
	return l.startSegment()
}

// TrimThrough removes every segment, other than the one being appended
// to, whose records all have sequence numbers up to seq.
func (l *Log) TrimThrough(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	keep := l.segs[:0]
	var err error
	for i, s := range l.segs {
		if i < len(l.segs)-1 && s.last <= seq {
			err = errors.Join(err, os.Remove(s.path))
			continue
		}
		keep = append(keep, s)
	}
	l.segs = keep
	return err
}

// LastSeq is the sequence number of the last record written (0: none).
func (l *Log) LastSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next - 1
}

// Bytes is the size of every segment file the log keeps: the disk space
// it takes, which a bounded buffer on top of it counts.
func (l *Log) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// Close closes the segment being appended to.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
