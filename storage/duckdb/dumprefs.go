package duckdb

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// A raw span repeats, verbatim, the largest values of the inputs and
// output mapped from it: the GenAI messages are the span's attributes. So
// the stored dump references them instead, and a read splices them back
// from the same row. A reference is refMark, the column ('i' inputs, 'o'
// output), the byte range in that column's text as "from,to", and
// refMark. No JSON text holds a control byte outside a string, nor an
// unescaped one inside, so a dump with references reads unambiguously;
// one that holds refMark or rowSep is stored as it came.
//
// References stay valid because a row's dump is written with its inputs
// (both are start columns, replaced together), and references into the
// output are made only for parts that carry both sides. A later end part
// that replaces the output keeps the old output inside the dump first
// (see keepOutputSQL and embeddedOutputPrefix).
const (
	refPrefix = "r:"
	refMark   = '\x01'
	// embeddedOutputPrefix starts a dump that carries, length-prefixed,
	// the output its references were made against, then the "r:" form.
	embeddedOutputPrefix = "o="
	// rowSep separates the dump from the row's inputs and output, which
	// the read expression (DuckDB.RawSpanText) appends to it.
	rowSep = "\x03"
	// minRefBytes is the shortest value worth a reference.
	minRefBytes = 48
)

// refSource is a column of the row a dump may reference.
type refSource struct {
	column byte // 'i' or 'o'
	text   []byte
}

// valueRef is one reference: n bytes of the dump at at are the bytes of
// the source column from from on.
type valueRef struct {
	at, n, from int
	column      byte
}

// withRefs returns dump in the "r:" form, its values found in sources
// replaced by references, or nil when none is found.
func withRefs(dump []byte, sources ...refSource) []byte {
	if bytes.IndexByte(dump, refMark) >= 0 || bytes.Contains(dump, []byte(rowSep)) {
		return nil
	}
	var refs []valueRef
	for _, src := range sources {
		memberValues(src.text, func(from, to int) {
			if to-from < minRefBytes {
				return
			}
			if at := bytes.Index(dump, src.text[from:to]); at >= 0 {
				refs = append(refs, valueRef{at: at, n: to - from, from: from, column: src.column})
			}
		})
	}
	if len(refs) == 0 {
		return nil
	}
	slices.SortFunc(refs, func(a, b valueRef) int { return a.at - b.at })
	out := make([]byte, 0, len(dump)/4+len(refPrefix))
	out = append(out, refPrefix...)
	done := 0
	for _, r := range refs {
		if r.at < done { // overlaps the previous reference
			continue
		}
		out = append(out, dump[done:r.at]...)
		out = append(out, refMark, r.column)
		out = strconv.AppendInt(out, int64(r.from), 10)
		out = append(out, ',')
		out = strconv.AppendInt(out, int64(r.from+r.n), 10)
		out = append(out, refMark)
		done = r.at + r.n
	}
	return append(out, dump[done:]...)
}

var errBadRef = errors.New("otel_dump: malformed reference")

// restoreRefs rebuilds a dump stored in the "r:" or "o=" form from the
// value the read expression returns: the stored form, rowSep, the byte
// length of the row's inputs, ':', its inputs and then its output.
func restoreRefs(s string) ([]byte, error) {
	var embedded string
	hasEmbedded := false
	if rest, ok := strings.CutPrefix(s, embeddedOutputPrefix); ok {
		var err error
		if embedded, s, err = cutSized(rest); err != nil {
			return nil, err
		}
		hasEmbedded = true
	}
	body, row, ok := strings.Cut(s, rowSep)
	if !ok {
		return nil, errors.New("otel_dump: references without the row's inputs and output")
	}
	body, ok = strings.CutPrefix(body, refPrefix)
	if !ok {
		return nil, errBadRef
	}
	inputs, output, err := cutSized(row)
	if err != nil {
		return nil, err
	}
	if hasEmbedded {
		output = embedded
	}
	return expandRefs(body, inputs, output)
}

// cutSized splits "N:" followed by at least N bytes into those N bytes
// and the rest.
func cutSized(s string) (head, rest string, err error) {
	digits, rest, ok := strings.Cut(s, ":")
	n, convErr := strconv.Atoi(digits)
	if !ok || convErr != nil || n < 0 || n > len(rest) {
		return "", "", errBadRef
	}
	return rest[:n], rest[n:], nil
}

// expandRefs replaces each reference in body with the bytes it names.
func expandRefs(body, inputs, output string) ([]byte, error) {
	out := make([]byte, 0, len(body)+len(inputs)+len(output))
	for {
		at := strings.IndexByte(body, refMark)
		if at < 0 {
			return append(out, body...), nil
		}
		out = append(out, body[:at]...)
		end := strings.IndexByte(body[at+1:], refMark)
		if end < 1 {
			return nil, errBadRef
		}
		value, err := refValue(body[at+1:at+1+end], inputs, output)
		if err != nil {
			return nil, err
		}
		out = append(out, value...)
		body = body[at+2+end:]
	}
}

// refValue resolves a reference's inside ("i12,345") against the row.
func refValue(ref, inputs, output string) (string, error) {
	text := inputs
	switch ref[0] {
	case 'i':
	case 'o':
		text = output
	default:
		return "", errBadRef
	}
	fromDigits, toDigits, ok := strings.Cut(ref[1:], ",")
	from, err1 := strconv.Atoi(fromDigits)
	to, err2 := strconv.Atoi(toDigits)
	if !ok || err1 != nil || err2 != nil || from < 0 || to < from || to > len(text) {
		return "", errBadRef
	}
	return text[from:to], nil
}

// memberValues calls fn with the byte range of each value of the
// top-level JSON object obj. It stops quietly at anything it does not
// understand: a reference is only ever made to bytes found verbatim.
func memberValues(obj []byte, fn func(from, to int)) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	for i++; ; i++ {
		i = skipSpace(obj, i)
		j, ok := skipString(obj, i)
		if !ok {
			return
		}
		i = skipSpace(obj, j)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		i = skipSpace(obj, i+1)
		if j, ok = skipValue(obj, i); !ok {
			return
		}
		fn(i, j)
		if i = skipSpace(obj, j); i >= len(obj) || obj[i] != ',' {
			return
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string starting at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the end of the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[j])) {
		j++
	}
	return j, j > i
}
