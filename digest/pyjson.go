package digest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weftdev/weft/internal/jsontext"
)

// ErrInvalidJSON is wrapped by every error for input that is not a JSON
// document.
var ErrInvalidJSON = errors.New("invalid JSON")

// maxDepth mirrors Python's default recursion limit: json.loads and
// json.dumps both fail beyond it, so no digest exists for deeper values.
// Call values share it.
const maxDepth = jsontext.MaxValueDepth

// Options selects the json.dumps variant to reproduce.
type Options struct {
	// SortKeys orders object members by key code point, as
	// json.dumps(val, sort_keys=True) does. Without it members keep their
	// first-seen order.
	SortKeys bool
	// Compact uses the "," and ":" separators of
	// json.dumps(val, separators=(",", ":")).
	Compact bool
}

// Dump is the text Python's json.dumps(json.loads(raw)) prints.
type Dump struct {
	Text []byte
	// Finite is false when a number overflowed a float64: Python prints
	// Infinity there, which is no longer JSON, so such text is fit for
	// hashing and sizing but not for returning to clients.
	Finite bool
}

// Canonical is json.dumps(val, sort_keys=True) of the JSON document raw:
// the exact text object and row digests hash.
func Canonical(raw json.RawMessage) ([]byte, error) {
	d, err := Dumps(raw, Options{SortKeys: true})
	return d.Text, err
}

// Dumps re-encodes raw as Python's default json encoder would after
// json.loads: ", " and ": " separators, ASCII-only output with \u escapes,
// duplicate keys collapsed to the last value, ints printed exactly and
// floats as Python repr.
func Dumps(raw json.RawMessage, opts Options) (Dump, error) {
	e := encoder{in: raw, sort: opts.SortKeys, finite: true, itemSep: ", ", keySep: ": "}
	if opts.Compact {
		e.itemSep, e.keySep = ",", ":"
	}
	e.skipSpace()
	out, err := e.value(make([]byte, 0, len(raw)+len(raw)/8))
	if err != nil {
		return Dump{}, err
	}
	e.skipSpace()
	if e.pos != len(e.in) {
		return Dump{}, e.fail("unexpected data after the top-level value")
	}
	return Dump{Text: out, Finite: e.finite}, nil
}

// encoder parses and re-encodes in one pass; it keeps no state between
// documents.
type encoder struct {
	in     []byte
	pos    int
	depth  int
	sort   bool
	finite bool
	// itemSep and keySep are json.dumps' separators.
	itemSep, keySep string
}

func (e *encoder) fail(msg string) error {
	return fmt.Errorf("%w at byte %d: %s", ErrInvalidJSON, e.pos, msg)
}

func (e *encoder) skipSpace() {
	for e.pos < len(e.in) {
		switch e.in[e.pos] {
		case ' ', '\t', '\n', '\r':
			e.pos++
		default:
			return
		}
	}
}

func (e *encoder) value(out []byte) ([]byte, error) {
	if e.pos >= len(e.in) {
		return nil, e.fail("unexpected end of input")
	}
	switch c := e.in[e.pos]; {
	case c == '{':
		return e.nested(out, e.object)
	case c == '[':
		return e.nested(out, e.array)
	case c == '"':
		return e.str(out, nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return e.number(out)
	case c == 't':
		return e.literal(out, "true")
	case c == 'f':
		return e.literal(out, "false")
	case c == 'n':
		return e.literal(out, "null")
	}
	return nil, e.fail("expected a JSON value")
}

func (e *encoder) nested(out []byte, f func([]byte) ([]byte, error)) ([]byte, error) {
	e.depth++
	if e.depth > maxDepth {
		return nil, e.fail(fmt.Sprintf("nesting deeper than %d levels", maxDepth))
	}
	out, err := f(out)
	e.depth--
	return out, err
}

func (e *encoder) literal(out []byte, word string) ([]byte, error) {
	if !bytes.HasPrefix(e.in[e.pos:], []byte(word)) {
		return nil, e.fail("expected " + word)
	}
	e.pos += len(word)
	return append(out, word...), nil
}

func (e *encoder) array(out []byte) ([]byte, error) {
	e.pos++ // '['
	out = append(out, '[')
	e.skipSpace()
	if e.pos < len(e.in) && e.in[e.pos] == ']' {
		e.pos++
		return append(out, ']'), nil
	}
	for first := true; ; first = false {
		if !first {
			out = append(out, e.itemSep...)
		}
		e.skipSpace()
		var err error
		if out, err = e.value(out); err != nil {
			return nil, err
		}
		e.skipSpace()
		if e.pos >= len(e.in) {
			return nil, e.fail("unterminated array")
		}
		switch e.in[e.pos] {
		case ',':
			e.pos++
		case ']':
			e.pos++
			return append(out, ']'), nil
		default:
			return nil, e.fail("expected ',' or ']' in array")
		}
	}
}

// member is one parsed object member. key holds the decoded code points
// (only when sorting); keyText and the value are ranges of a scratch buffer.
type member struct {
	key              []rune
	keyStart, keyEnd int
	valStart, valEnd int
}

func (e *encoder) object(out []byte) ([]byte, error) {
	e.pos++ // '{'
	e.skipSpace()
	if e.pos < len(e.in) && e.in[e.pos] == '}' {
		e.pos++
		return append(out, "{}"...), nil
	}
	var scratch []byte
	var members []member
	for {
		m, buf, err := e.member(scratch)
		if err != nil {
			return nil, err
		}
		scratch, members = buf, append(members, m)
		e.skipSpace()
		if e.pos >= len(e.in) {
			return nil, e.fail("unterminated object")
		}
		c := e.in[e.pos]
		e.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			e.pos--
			return nil, e.fail("expected ',' or '}' in object")
		}
		e.skipSpace()
	}
	return e.writeMembers(out, scratch, members), nil
}

func (e *encoder) member(scratch []byte) (member, []byte, error) {
	var m member
	if e.pos >= len(e.in) || e.in[e.pos] != '"' {
		return m, nil, e.fail("expected a string object key")
	}
	m.keyStart = len(scratch)
	var keyRunes *[]rune
	if e.sort {
		keyRunes = &m.key
	}
	scratch, err := e.str(scratch, keyRunes)
	if err != nil {
		return m, nil, err
	}
	m.keyEnd = len(scratch)
	e.skipSpace()
	if e.pos >= len(e.in) || e.in[e.pos] != ':' {
		return m, nil, e.fail("expected ':' after object key")
	}
	e.pos++
	e.skipSpace()
	m.valStart = len(scratch)
	if scratch, err = e.value(scratch); err != nil {
		return m, nil, err
	}
	m.valEnd = len(scratch)
	return m, scratch, nil
}

// writeMembers applies Python dict semantics (a repeated key keeps its
// first position and its last value) and the requested order.
func (e *encoder) writeMembers(out, scratch []byte, ms []member) []byte {
	keyText := func(m member) []byte { return scratch[m.keyStart:m.keyEnd] }
	if e.sort {
		slices.SortStableFunc(ms, func(a, b member) int { return slices.Compare(a.key, b.key) })
		ms = lastOfRuns(ms, func(a, b member) bool { return slices.Equal(a.key, b.key) })
	} else if len(ms) > 1 {
		ms = collapseRepeats(ms, keyText)
	}
	out = append(out, '{')
	for i, m := range ms {
		if i > 0 {
			out = append(out, e.itemSep...)
		}
		out = append(out, keyText(m)...)
		out = append(out, e.keySep...)
		out = append(out, scratch[m.valStart:m.valEnd]...)
	}
	return append(out, '}')
}

// lastOfRuns keeps, of each run of equal neighbours, the last one.
func lastOfRuns(ms []member, eq func(a, b member) bool) []member {
	kept := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && eq(m, ms[i+1]) {
			continue
		}
		kept = append(kept, m)
	}
	return kept
}

// collapseRepeats keeps first positions with last values. The escaped key
// text identifies a key exactly, lone surrogates included.
func collapseRepeats(ms []member, keyText func(member) []byte) []member {
	seen := make(map[string]int, len(ms))
	kept := ms[:0]
	for _, m := range ms {
		k := string(keyText(m))
		if i, ok := seen[k]; ok {
			kept[i].valStart, kept[i].valEnd = m.valStart, m.valEnd
			continue
		}
		seen[k] = len(kept)
		kept = append(kept, m)
	}
	return kept
}
