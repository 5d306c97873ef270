package jsontext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// InvalidUTF8Error is a JSON body with bytes that are not UTF-8. Path is
// the dotted location of the string that holds them (list items as
// name[i]); empty when the bytes are outside any string or the body is
// malformed before them. Key says the bytes are in an object key under
// Path rather than in its value.
type InvalidUTF8Error struct {
	Path   string
	Key    bool
	Offset int64
}

func (e *InvalidUTF8Error) Error() string {
	what := "a string"
	if e.Key {
		what = "an object key"
	}
	return fmt.Sprintf("invalid UTF-8 in %s at byte %d; send text as UTF-8", what, e.Offset)
}

// locateInvalidUTF8 finds the first invalid byte of body and the path of
// the string holding it. encoding/json's tokenizer reads invalid UTF-8
// without complaint, so it can walk up to the bad byte.
func locateInvalidUTF8(body []byte) error {
	bad := int64(firstInvalid(body))
	e := &InvalidUTF8Error{Offset: bad}
	w := walker{dec: json.NewDecoder(bytes.NewReader(body))}
	for {
		start := w.dec.InputOffset()
		tok, err := w.dec.Token()
		if err != nil {
			return e
		}
		if _, isStr := tok.(string); isStr && w.dec.InputOffset() > bad && start <= bad {
			e.Path, e.Key = w.locate()
			return e
		}
		if w.dec.InputOffset() > bad {
			return e
		}
		w.step(tok)
	}
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// frame is one open object or array.
type frame struct {
	array   bool
	index   int    // arrays: the index of the next item
	key     string // objects: the key whose value comes next
	wantKey bool   // objects: a key comes next
}

type walker struct {
	dec   *json.Decoder
	stack []frame
}

// locate names the position of the next token: the path of the value it
// is (or of the object it is a key in).
func (w *walker) locate() (string, bool) {
	var b strings.Builder
	isKey := false
	for i, f := range w.stack {
		switch {
		case f.array:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		case f.wantKey && i == len(w.stack)-1:
			isKey = true
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
	}
	return b.String(), isKey
}

// step records tok in the stack.
func (w *walker) step(tok json.Token) {
	if n := len(w.stack); n > 0 && !w.stack[n-1].array && w.stack[n-1].wantKey {
		if k, ok := tok.(string); ok {
			w.stack[n-1].key, w.stack[n-1].wantKey = k, false
			return
		}
	}
	switch tok {
	case json.Delim('{'):
		w.stack = append(w.stack, frame{wantKey: true})
		return
	case json.Delim('['):
		w.stack = append(w.stack, frame{array: true})
		return
	case json.Delim('}'), json.Delim(']'):
		w.stack = w.stack[:len(w.stack)-1]
	}
	w.valueDone()
}

// valueDone moves the enclosing container past one value.
func (w *walker) valueDone() {
	if n := len(w.stack); n > 0 {
		if w.stack[n-1].array {
			w.stack[n-1].index++
		} else {
			w.stack[n-1].wantKey = true
		}
	}
}
