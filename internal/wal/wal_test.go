package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func openLog(t *testing.T, dir string, seg int64) *Log {
	t.Helper()
	l, err := Open(dir, Options{SegmentBytes: seg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func replayAll(t *testing.T, l *Log, after uint64) (seqs []uint64, recs []string) {
	t.Helper()
	r := l.NewReader(after)
	defer r.Close()
	for {
		seq, p, err := r.Next(l.LastSeq())
		if errors.Is(err, io.EOF) {
			return seqs, recs
		}
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
		recs = append(recs, string(p))
	}
}

func TestAppendReopenReplay(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 64) // tiny segments: every group rotates
	for i := range 5 {
		last, err := l.Append([]byte(fmt.Sprintf("a%d", i)), []byte(fmt.Sprintf("b%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if want := uint64(2*i + 2); last != want {
			t.Fatalf("last = %d, want %d", last, want)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, 64)
	seqs, recs := replayAll(t, l, 3)
	if len(seqs) != 7 || seqs[0] != 4 || recs[0] != "b1" || recs[6] != "b4" {
		t.Fatalf("replay after 3 = %v %v", seqs, recs)
	}
	if last, _ := l.Append([]byte("c")); last != 11 {
		t.Fatalf("append after reopen got seq %d, want 11", last)
	}
}

func TestTornTailIsCutOnOpen(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 1<<20)
	for _, r := range []string{"one", "two", "three"} {
		if _, err := l.Append([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	_ = l.Close()
	seg := onlySegment(t, dir)
	st, _ := os.Stat(seg)
	if err := os.Truncate(seg, st.Size()-2); err != nil { // a crash mid-write
		t.Fatal(err)
	}
	l = openLog(t, dir, 1<<20)
	_, recs := replayAll(t, l, 0)
	if len(recs) != 2 || recs[1] != "two" {
		t.Fatalf("after torn tail: %v, want one and two", recs)
	}
	if last, _ := l.Append([]byte("again")); last != 3 {
		t.Fatalf("next seq = %d, want 3 (the torn record was never acknowledged)", last)
	}
	_, recs = replayAll(t, l, 0)
	if recs[2] != "again" {
		t.Fatalf("records = %v", recs)
	}
}

func TestCorruptionBeforeTheTailIsAnError(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 32)
	for _, r := range []string{"first-record", "second-record", "third-record"} {
		if _, err := l.Append([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	_ = l.Close()
	entries, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	body, _ := os.ReadFile(entries[0])
	body[len(body)-1] ^= 0xff
	if err := os.WriteFile(entries[0], body, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{SegmentBytes: 32}); err == nil {
		t.Fatal("open succeeded over a corrupt middle segment")
	}
}

func TestTrimKeepsUnappliedSegments(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 32)
	for i := range 6 {
		if _, err := l.Append(bytes.Repeat([]byte{byte('a' + i)}, 20)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.TrimThrough(3); err != nil {
		t.Fatal(err)
	}
	// Every record fills a segment of its own here, so exactly 1..3 go.
	seqs, _ := replayAll(t, l, 3)
	if fmt.Sprint(seqs) != "[4 5 6]" {
		t.Fatalf("after trim through 3: %v, want [4 5 6]", seqs)
	}
	if _, _, err := l.NewReader(0).Next(6); err == nil {
		t.Fatal("record 1 still readable after trim through 3")
	}
}

func onlySegment(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	if len(m) != 1 {
		t.Fatalf("segments = %v", m)
	}
	return m[0]
}

// FuzzOpen feeds arbitrary bytes as the only segment: Open must cut or
// refuse them, never panic, and a reopened log must append after them.
func FuzzOpen(f *testing.F) {
	f.Add(appendRecord(nil, 1, []byte("hello")))
	f.Add(append(appendRecord(nil, 1, []byte("x")), 1, 2, 3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.wal", 1)), body, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Open(dir, Options{})
		if err != nil {
			return
		}
		defer l.Close()
		before := l.LastSeq()
		if last, err := l.Append([]byte("next")); err != nil || last != before+1 {
			t.Fatalf("append after open: %d, %v (last was %d)", last, err, before)
		}
	})
}

// A reader follows the log as it grows across segments, reading only what
// was appended.
func TestReaderFollowsAppends(t *testing.T) {
	l := openLog(t, t.TempDir(), 64)
	r := l.NewReader(0)
	defer r.Close()
	var got []string
	for i := range 6 {
		last, err := l.Append([]byte(fmt.Sprintf("rec-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		for {
			_, p, err := r.Next(last)
			if err != nil {
				break
			}
			got = append(got, string(p))
		}
	}
	if fmt.Sprint(got) != "[rec-0 rec-1 rec-2 rec-3 rec-4 rec-5]" {
		t.Fatalf("read %v", got)
	}
	if _, _, err := r.Next(6); err == nil {
		t.Fatal("read past the last record")
	}
	r2 := l.NewReader(3)
	defer r2.Close()
	if seq, p, err := r2.Next(6); err != nil || seq != 4 || string(p) != "rec-3" {
		t.Fatalf("reader after 3: %d %q %v", seq, p, err)
	}
}

// TestBytesFollowsDisk checks that Bytes is the segments' size on disk as
// records are appended, segments trimmed, and the log reopened.
func TestBytesFollowsDisk(t *testing.T) {
	dir := t.TempDir()
	onDisk := func() int64 {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			n += info.Size()
		}
		return n
	}
	l := openLog(t, dir, 100)
	for i := range 10 {
		if _, err := l.Append(bytes.Repeat([]byte{byte(i)}, 40)); err != nil {
			t.Fatal(err)
		}
		if got, want := l.Bytes(), onDisk(); got != want {
			t.Fatalf("after %d appends Bytes = %d, files hold %d", i+1, got, want)
		}
	}
	if err := l.TrimThrough(6); err != nil {
		t.Fatal(err)
	}
	if got, want := l.Bytes(), onDisk(); got != want || got >= 10*(40+headerSize) {
		t.Fatalf("after trim Bytes = %d, files hold %d", got, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := openLog(t, dir, 100).Bytes(), onDisk(); got != want {
		t.Fatalf("reopened Bytes = %d, files hold %d", got, want)
	}
}

func TestMarks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mark")
	cases := []struct {
		name  string
		write func() error
		want  uint64
	}{
		{"no mark", func() error { return nil }, 0},
		{"written", func() error { return WriteMark(path, 42) }, 42},
		{"rewritten", func() error { return WriteMark(path, 7) }, 7},
		{"damaged", func() error { return os.WriteFile(path, []byte("x1"), 0o600) }, 0},
	}
	for _, tc := range cases {
		if err := tc.write(); err != nil {
			t.Fatal(err)
		}
		if got := ReadMark(path); got != tc.want {
			t.Fatalf("%s: ReadMark = %d, want %d", tc.name, got, tc.want)
		}
	}
}
