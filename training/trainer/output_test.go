package trainer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadLineBoundsLines(t *testing.T) {
	long := strings.Repeat("x", 5000)
	in := "short\r\n" + long + "\n" + `{"type":"log"}` + "\nlast without newline"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	want := []struct {
		line    string
		tooLong bool
	}{{"short", false}, {"", true}, {`{"type":"log"}`, false}, {"last without newline", false}}
	for i, w := range want {
		line, tooLong, err := readLine(br, 100)
		if string(line) != w.line || tooLong != w.tooLong {
			t.Fatalf("line %d = %q too long %v, want %q %v", i, line, tooLong, w.line, w.tooLong)
		}
		if i == len(want)-1 && !errors.Is(err, io.EOF) {
			t.Fatalf("last line err = %v, want EOF", err)
		}
	}
}

// FuzzReadLine: however output is split, every line comes back whole or
// is reported too long, never longer than the bound, and nothing else is
// lost.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2)
	f.Add([]byte(`{"type":"gradient_step","data":{"loss":1}}`+"\n"), 64)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		max = 1 + (max&0xffff)%512
		br := bufio.NewReaderSize(bytes.NewReader(in), 16)
		var got [][]byte
		for {
			line, tooLong, err := readLine(br, max)
			if len(line) > max+1 {
				t.Fatalf("line of %d bytes over the bound %d", len(line), max)
			}
			if !tooLong {
				got = append(got, line)
			}
			if err != nil {
				break
			}
		}
		for _, want := range bytes.Split(in, []byte("\n")) {
			want = bytes.TrimRight(want, "\r")
			if len(want) <= max && !containsLine(got, want) {
				t.Fatalf("line %q was lost", want)
			}
		}
	})
}

func containsLine(lines [][]byte, want []byte) bool {
	for _, l := range lines {
		if bytes.Equal(l, want) {
			return true
		}
	}
	return false
}

func TestTailKeepsTheEnd(t *testing.T) {
	tl := &tail{max: 8}
	for _, s := range []string{"hello ", "world, ", "again"} {
		_, _ = tl.Write([]byte(s))
	}
	if tl.String() != "d, again" {
		t.Fatalf("tail = %q", tl.String())
	}
	if (&tail{max: 8}).String() != "(nothing on standard error)" {
		t.Fatal("an empty tail says nothing")
	}
}
