package jsontext

import (
	"bytes"
	"unicode/utf8"
)

// Replacement is what a lone surrogate escape becomes: the escape of
// U+FFFD, the same length as the escape it replaces. Go's encoding/json
// decodes lone surrogates to U+FFFD too, and OTLP strings, being Go
// strings, can only carry U+FFFD in their place.
const Replacement = `\ufffd`

// CleanSurrogates rewrites every lone surrogate escape in the JSON text
// doc ("\ud800" not followed by a low surrogate escape, or "\udc00" not
// preceded by a high one) to \ufffd. Such escapes are valid JSON, and
// Python's json.dumps writes them, but they encode no Unicode text:
// DuckDB refuses the whole document in its JSON functions. Valid pairs
// stay as they are. doc itself is returned, uncopied, when it holds no
// surrogate escape at all, which a fast search decides for most inputs.
func CleanSurrogates(doc []byte) []byte {
	if !hasSurrogateEscape(doc) {
		return doc
	}
	var out []byte // a copy, made at the first rewrite
	for i := 0; i < len(doc); i++ {
		if doc[i] != '\\' {
			continue
		}
		i++ // the escaped character; a backslash pair is skipped whole
		if i >= len(doc) || doc[i] != 'u' {
			continue
		}
		r, ok := hex4(doc, i+1)
		if !ok || !isSurrogate(r) {
			continue
		}
		if isHigh(r) && isLowEscape(doc, i+5) {
			i += 10 // the pair: this escape and the next
			continue
		}
		if out == nil {
			out = append([]byte(nil), doc...)
		}
		copy(out[i-1:], Replacement)
		i += 4
	}
	if out == nil {
		return doc
	}
	return out
}

// hasSurrogateEscape reports whether doc may hold an escape in
// \ud800..\udfff (an escaped backslash before "ud800" counts too: the
// caller's walk tells them apart).
func hasSurrogateEscape(doc []byte) bool {
	for i := 0; ; {
		k := bytes.Index(doc[i:], []byte(`\u`))
		if k < 0 {
			return false
		}
		i += k + 2
		if i+1 < len(doc) && (doc[i] == 'd' || doc[i] == 'D') && isSurrogateNibble(doc[i+1]) {
			return true
		}
	}
}

func isSurrogateNibble(c byte) bool {
	return (c >= '8' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// isLowEscape reports whether doc holds \uDC00..\uDFFF at i.
func isLowEscape(doc []byte, i int) bool {
	if i+1 >= len(doc) || doc[i] != '\\' || doc[i+1] != 'u' {
		return false
	}
	r, ok := hex4(doc, i+2)
	return ok && r >= 0xDC00 && r <= 0xDFFF
}

func hex4(doc []byte, i int) (rune, bool) {
	if i+4 > len(doc) {
		return 0, false
	}
	var r rune
	for _, c := range doc[i : i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func isSurrogate(r rune) bool { return r >= 0xD800 && r <= 0xDFFF }

func isHigh(r rune) bool { return r >= 0xD800 && r <= 0xDBFF }

// Sanitize prepares a JSON request body for decoding. Invalid UTF-8 is
// refused with an *InvalidUTF8Error naming the field that holds it, and
// lone surrogate escapes are rewritten by CleanSurrogates. Syntax errors
// are left for the decoder to report. body itself is returned when
// nothing needed rewriting.
func Sanitize(body []byte) ([]byte, error) {
	if !utf8.Valid(body) {
		return nil, locateInvalidUTF8(body)
	}
	return CleanSurrogates(body), nil
}
