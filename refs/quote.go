package refs

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

const upperHex = "0123456789ABCDEF"

// Quote percent-encodes every byte of s except A-Z a-z 0-9 and "_.-~",
// as Python's urllib.parse.quote(s, safe="") does.
func Quote(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	out := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			out = append(out, c)
			continue
		}
		out = append(out, '%', upperHex[c>>4], upperHex[c&0xf])
	}
	return string(out)
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == '-' || c == '~'
}

// Unquote decodes %XX sequences like Python's urllib.parse.unquote: a '%'
// not followed by two hex digits stays as it is, and bytes that do not
// form UTF-8 become U+FFFD.
func Unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	if utf8.Valid(out) {
		return string(out)
	}
	var b strings.Builder
	for len(out) > 0 {
		r, size := utf8.DecodeRune(out)
		b.WriteRune(r) // RuneError for an invalid byte
		out = out[size:]
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// ParseIndex parses s as Python's int() does for a decimal string:
// surrounding whitespace, an optional sign, and single underscores between
// digits are allowed. Values beyond int64 saturate; they are valid
// integers that address nothing.
func ParseIndex(s string) (int64, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxInt64-int64(c-'0'))/10 {
			v = math.MaxInt64
			continue
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}
