package sse

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary streams to the reader: it must never panic,
// never return more than its bound, and every event it returns must read
// back the same after Write.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"data: {\"a\":1}\n\ndata: [DONE]\n\n",
		"event: error\r\ndata: x\r\n\r\n",
		": ping\n\ndata: a\ndata: b\n\n",
		"data: x",
		"data:\n\n\n",
	} {
		f.Add([]byte(seed))
	}
	const max = 256
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := NewReader(bytes.NewReader(in), max)
		for range len(in) + 1 {
			ev, err := rd.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(ev.Data)+len(ev.Name) > max+2 {
				t.Fatalf("event of %d bytes passed a %d-byte bound", len(ev.Data)+len(ev.Name), max)
			}
			checkRoundTrip(t, ev)
		}
		t.Fatal("reader returned more events than the input has bytes")
	})
}

func checkRoundTrip(t *testing.T, ev Event) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, ev); err != nil {
		return // names with line breaks are refused, never written
	}
	back, err := NewReader(&buf, 4*max(len(ev.Data)+len(ev.Name), 16)).Next()
	if err != nil {
		t.Fatalf("reading back %q: %v", buf.String(), err)
	}
	if back.Name != ev.Name || back.Comment != ev.Comment || !bytes.Equal(back.Data, trimLineEnds(ev.Data)) {
		t.Fatalf("round trip changed %+v (%q) into %+v (%q)", ev, ev.Data, back, back.Data)
	}
}

// trimLineEnds drops a "\r" ending any line: Write leaves it out, since
// written back it would read as part of the line ending.
func trimLineEnds(data []byte) []byte {
	var out [][]byte
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		out = append(out, bytes.TrimSuffix(line, []byte("\r")))
	}
	return bytes.Join(out, []byte("\n"))
}
