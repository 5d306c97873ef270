package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// readAll reads every event and renders each as name|data, or #comment.
func readAll(in string, max int) ([]string, error) {
	rd := NewReader(strings.NewReader(in), max)
	var out []string
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		if ev.Comment {
			out = append(out, "#"+string(ev.Data))
		} else {
			out = append(out, ev.Name+"|"+string(ev.Data))
		}
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
		err  error
	}{
		{"openai stream", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`|{"a":1}`, "|[DONE]"}, nil},
		{"crlf", "data: x\r\n\r\n", []string{"|x"}, nil},
		{"no space after colon", "data:x\n\n", []string{"|x"}, nil},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"|a\nb"}, nil},
		{"named error event", "event: error\ndata: {\"error\":{}}\n\n", []string{`error|{"error":{}}`}, nil},
		{"comment keep-alive", ": ping\n\ndata: x\n\n", []string{"#ping", "|x"}, nil},
		{"comment inside an event", "data: a\n: ka\ndata: b\n\n", []string{"#ka", "|a\nb"}, nil},
		{"blank lines alone", "\n\n\ndata: x\n\n", []string{"|x"}, nil},
		{"name without data is dropped", "event: x\n\ndata: y\n\n", []string{"|y"}, nil},
		{"id and retry ignored", "id: 1\nretry: 5\ndata: x\n\n", []string{"|x"}, nil},
		{"empty data line", "data:\n\n", []string{"|"}, nil},
		{"cut off event", "data: x\n", nil, io.ErrUnexpectedEOF},
		{"cut off line", "data: x", nil, io.ErrUnexpectedEOF},
		{"line over the bound", "data: " + strings.Repeat("x", 100) + "\n\n", nil, ErrTooLarge},
		{"event over the bound", strings.Repeat("data: xxxxxxxxxx\n", 10) + "\n", nil, ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(tc.in, 64)
			if !errors.Is(err, tc.err) && !(err == nil && tc.err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if strings.Join(got, "¶") != strings.Join(tc.want, "¶") {
				t.Fatalf("events = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReaderLongLineAcrossBufferRefills(t *testing.T) {
	payload := strings.Repeat("y", 10000)
	got, err := readAll("data: "+payload+"\n\n", 20000)
	if err != nil || len(got) != 1 || got[0] != "|"+payload {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	events := []Event{
		{Data: []byte(`{"choices":[]}`)},
		{Name: "error", Data: []byte(`{"error":{"message":"x"}}`)},
		{Data: []byte("two\nlines")},
		{Comment: true, Data: []byte("keep-alive")},
		{Data: []byte("[DONE]")},
	}
	var buf bytes.Buffer
	for _, ev := range events {
		if err := Write(&buf, ev); err != nil {
			t.Fatal(err)
		}
	}
	rd := NewReader(&buf, 1024)
	for i, want := range events {
		got, err := rd.Next()
		if err != nil || got.Name != want.Name || got.Comment != want.Comment || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("event %d = %+v (%s), %v; want %+v", i, got, got.Data, err, want)
		}
	}
	if err := Write(io.Discard, Event{Name: "x\ndata: evil", Data: []byte("y")}); err == nil {
		t.Fatal("a name with a line break was written")
	}
}

func TestReady(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"data: a\n\ndata: b\n\n", true},
		{"data: a\n\ndata: b\n", false},
		{"data: a\r\n\r\ndata: b\r\n\r\n", true},
		{"data: a\n\n", false},
	}
	for _, tc := range tests {
		rd := NewReader(strings.NewReader(tc.in), 1024)
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
		if got := rd.Ready(); got != tc.want {
			t.Errorf("%q: Ready after the first event = %v, want %v", tc.in, got, tc.want)
		}
	}
}
