package digest

import (
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// str reads the JSON string at e.pos and appends its Python ensure_ascii
// encoding to out. When runes is not nil it also receives the decoded code
// points, which may include lone surrogates, as Python strings may.
func (e *encoder) str(out []byte, runes *[]rune) ([]byte, error) {
	start := e.pos + 1
	i := start
	for i < len(e.in) {
		c := e.in[i]
		if c == '"' {
			// Printable ASCII without escapes encodes to itself.
			out = append(out, e.in[start-1:i+1]...)
			if runes != nil {
				*runes = []rune(string(e.in[start:i]))
			}
			e.pos = i + 1
			return out, nil
		}
		if c < 0x20 || c > 0x7e || c == '\\' {
			break
		}
		i++
	}
	decoded, err := e.decodeString()
	if err != nil {
		return nil, err
	}
	if runes != nil {
		*runes = decoded
	}
	return appendPyString(out, decoded), nil
}

// decodeString follows Python's json scanner: escapes are decoded, a high
// surrogate escape followed by a low one combines, any other surrogate
// escape stays a lone code point, raw control characters are rejected.
func (e *encoder) decodeString() ([]rune, error) {
	e.pos++ // opening quote
	var rs []rune
	for {
		if e.pos >= len(e.in) {
			return nil, e.fail("unterminated string")
		}
		c := e.in[e.pos]
		switch {
		case c == '"':
			e.pos++
			return rs, nil
		case c == '\\':
			r, err := e.escape()
			if err != nil {
				return nil, err
			}
			rs = append(rs, r)
		case c < 0x20:
			return nil, e.fail("control character in string; escape it")
		case c < utf8.RuneSelf:
			rs = append(rs, rune(c))
			e.pos++
		default:
			r, size := utf8.DecodeRune(e.in[e.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, e.fail("invalid UTF-8 in string")
			}
			rs = append(rs, r)
			e.pos += size
		}
	}
}

func (e *encoder) escape() (rune, error) {
	if e.pos+1 >= len(e.in) {
		return 0, e.fail("unterminated escape")
	}
	c := e.in[e.pos+1]
	e.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		return e.unicodeEscape()
	}
	e.pos -= 2
	return 0, e.fail("invalid escape")
}

// unicodeEscape decodes the four hex digits after \u (already consumed).
func (e *encoder) unicodeEscape() (rune, error) {
	r, ok := hex4(e.in[e.pos:])
	if !ok {
		return 0, e.fail(`invalid \u escape`)
	}
	e.pos += 4
	if r < 0xd800 || r > 0xdbff {
		return r, nil
	}
	rest := e.in[e.pos:]
	if len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u' {
		if lo, ok := hex4(rest[2:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
			e.pos += 6
			return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), nil
		}
	}
	return r, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// appendPyString writes rs as Python's ensure_ascii encoder does: short
// escapes for " \ \n \r \t \b \f, printable ASCII as is, everything else
// as lowercase \uXXXX, with surrogate pairs above U+FFFF.
func appendPyString(out []byte, rs []rune) []byte {
	out = append(out, '"')
	for _, r := range rs {
		switch {
		case r == '"':
			out = append(out, `\"`...)
		case r == '\\':
			out = append(out, `\\`...)
		case r >= 0x20 && r <= 0x7e:
			out = append(out, byte(r))
		case r == '\n':
			out = append(out, `\n`...)
		case r == '\r':
			out = append(out, `\r`...)
		case r == '\t':
			out = append(out, `\t`...)
		case r == '\b':
			out = append(out, `\b`...)
		case r == '\f':
			out = append(out, `\f`...)
		case r > 0xffff:
			r -= 0x10000
			out = appendU(out, 0xd800+(r>>10))
			out = appendU(out, 0xdc00+(r&0x3ff))
		default:
			out = appendU(out, r)
		}
	}
	return append(out, '"')
}

func appendU(out []byte, r rune) []byte {
	return append(out, '\\', 'u',
		hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
