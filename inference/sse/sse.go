// Package sse reads and writes server-sent events the way OpenAI-compatible
// servers stream chat completions: "data:" lines (several join with a
// newline), an optional "event:" name, ":" comments used as keep-alives,
// events ended by a blank line. Lines end in "\n" or "\r\n" (a lone "\r",
// which JSON payloads never hold unescaped, is not a line end). Every read is
// bounded, so an upstream that never ends a line cannot take memory.
//
// It imports nothing of Weft.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Event is one dispatched event, or one comment line.
type Event struct {
	// Name is the event field; "" is the default ("message").
	Name string
	// Data is the event's data lines joined by "\n".
	Data []byte
	// Comment is set for a comment line; Data then holds its text.
	Comment bool
}

// ErrTooLarge means an event (or one line) exceeded the reader's bound.
var ErrTooLarge = errors.New("server-sent event exceeds the size limit")

// Reader reads events from a stream.
type Reader struct {
	r    *bufio.Reader
	max  int
	line []byte
	data []byte
	name string
	has  bool // a data line was seen since the last dispatch
}

// NewReader reads from r; an event (its data and name) or a line longer
// than maxEventBytes is an ErrTooLarge error.
func NewReader(r io.Reader, maxEventBytes int) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 4096)
	}
	return &Reader{r: br, max: maxEventBytes}
}

// Next returns the next event or comment. At the end of the stream it
// returns io.EOF, or io.ErrUnexpectedEOF when an event was cut off before
// its blank line. The returned Data is valid until the next call.
func (rd *Reader) Next() (Event, error) {
	for {
		line, err := rd.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && (rd.has || len(rd.line) > 0) {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if ev, ok, err := rd.field(line); ok || err != nil {
			return ev, err
		}
	}
}

// field applies one line; ok reports a complete event or comment.
func (rd *Reader) field(line []byte) (Event, bool, error) {
	if len(line) == 0 {
		if !rd.has {
			rd.name = ""
			return Event{}, false, nil
		}
		ev := Event{Name: rd.name, Data: rd.data}
		rd.has, rd.name, rd.data = false, "", rd.data[:0]
		return ev, true, nil
	}
	if line[0] == ':' {
		return Event{Comment: true, Data: bytes.TrimPrefix(line[1:], []byte(" "))}, true, nil
	}
	key, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(key) {
	case "data":
		if rd.has {
			rd.data = append(rd.data, '\n')
		}
		rd.data = append(rd.data, value...)
		rd.has = true
	case "event":
		rd.name = string(value)
	}
	if len(rd.data)+len(rd.name) > rd.max {
		return Event{}, false, fmt.Errorf("%w (%d bytes)", ErrTooLarge, rd.max)
	}
	return Event{}, false, nil
}

// readLine returns the next line without its ending. The slice is valid
// until the next call.
func (rd *Reader) readLine() ([]byte, error) {
	rd.line = rd.line[:0]
	for {
		chunk, err := rd.r.ReadSlice('\n')
		if len(rd.line)+len(chunk) > rd.max+2 {
			return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, rd.max)
		}
		rd.line = append(rd.line, chunk...)
		switch {
		case err == nil:
			line := rd.line[:len(rd.line)-1]
			return bytes.TrimSuffix(line, []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// Write writes ev to w: a comment line, or its name and data lines and
// the blank line that dispatches it.
func Write(w io.Writer, ev Event) error {
	b, err := AppendEvent(nil, ev)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendEvent appends ev's wire form to dst, so a writer can reuse one
// buffer for a whole stream.
func AppendEvent(dst []byte, ev Event) ([]byte, error) {
	if strings.ContainsAny(ev.Name, "\r\n") {
		return dst, fmt.Errorf("event name %q holds a line break", ev.Name)
	}
	prefix := "data: "
	if ev.Comment {
		prefix = ": "
	} else if ev.Name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, ev.Name...)
		dst = append(dst, '\n')
	}
	// Each line of Data gets its own prefix, so no payload can end the
	// event early or start a field of its own.
	for line := range bytes.SplitSeq(ev.Data, []byte("\n")) {
		dst = append(dst, prefix...)
		dst = append(dst, bytes.TrimSuffix(line, []byte("\r"))...)
		dst = append(dst, '\n')
	}
	return append(dst, '\n'), nil
}

// Ready reports that a whole event is already buffered, so the next
// Next will not wait on the stream: a relay can hold its flush until it
// would.
func (rd *Reader) Ready() bool {
	b, _ := rd.r.Peek(rd.r.Buffered())
	return bytes.Contains(b, []byte("\n\n")) || bytes.Contains(b, []byte("\n\r\n"))
}
