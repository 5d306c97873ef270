package jsontext

import "unicode/utf8"

// Valid reports whether s is exactly one JSON value, optionally
// surrounded by whitespace, in valid UTF-8: the answer of json.Valid plus
// utf8.ValidString, in one pass and several times faster. Deciding whether
// OTLP string attributes are embeddable JSON is the hottest step of
// mapping spans. Lone surrogate escapes pass, as they do in json.Valid;
// CleanSurrogates rewrites them.
func Valid(s string) bool { return ValidDepth(s, MaxDepth) }

// ValidDepth is Valid with objects and arrays nested at most maxDepth
// levels.
func ValidDepth(s string, maxDepth int) bool {
	p := jsonScan{s: s, max: maxDepth}
	p.ws()
	if !p.value(0) {
		return false
	}
	p.ws()
	return p.i == len(s)
}

// MaxDepth is encoding/json's nesting limit, which Valid applies too.
const MaxDepth = 10000

type jsonScan struct {
	s   string
	i   int
	max int
}

func (p *jsonScan) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScan) value(depth int) bool {
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return depth < p.max && p.object(depth+1)
	case c == '[':
		return depth < p.max && p.array(depth+1)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	}
	return false
}

func (p *jsonScan) lit(word string) bool {
	if len(p.s)-p.i < len(word) || p.s[p.i:p.i+len(word)] != word {
		return false
	}
	p.i += len(word)
	return true
}

func (p *jsonScan) object(depth int) bool {
	p.i++ // '{'
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return true
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' || !p.str() {
			return false
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return false
		}
		p.i++
		p.ws()
		if !p.value(depth) {
			return false
		}
		if done, ok := p.next('}'); !ok || done {
			return ok
		}
	}
}

func (p *jsonScan) array(depth int) bool {
	p.i++ // '['
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return true
	}
	for {
		p.ws()
		if !p.value(depth) {
			return false
		}
		if done, ok := p.next(']'); !ok || done {
			return ok
		}
	}
}

// next consumes a ',' (done=false) or the closing byte (done=true).
func (p *jsonScan) next(closing byte) (done, ok bool) {
	p.ws()
	if p.i >= len(p.s) {
		return false, false
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		p.ws()
		return false, true
	case closing:
		p.i++
		return true, true
	}
	return false, false
}

func (p *jsonScan) str() bool {
	p.i++ // '"'
	s := p.s
	for p.i < len(s) {
		// Plain ASCII runs are the bulk of every string: skip them in a
		// tight loop before looking at what stopped it.
		i := p.i
		for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
			i++
		}
		p.i = i
		if i == len(s) {
			return false
		}
		c := s[i]
		switch {
		case c == '"':
			p.i++
			return true
		case c == '\\':
			if !p.escape() {
				return false
			}
		case c < 0x20:
			return false
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			p.i += size
		}
	}
	return false
}

func (p *jsonScan) escape() bool {
	p.i++ // '\\'
	if p.i >= len(p.s) {
		return false
	}
	switch p.s[p.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i++
		return true
	case 'u':
		if len(p.s)-p.i < 5 {
			return false
		}
		for _, h := range []byte(p.s[p.i+1 : p.i+5]) {
			if !isHex(h) {
				return false
			}
		}
		p.i += 5
		return true
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (p *jsonScan) number() bool {
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return false
		}
	}
	return true
}

func (p *jsonScan) digits() int {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}
