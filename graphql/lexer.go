package graphql

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokenKind classifies a lexical token of a GraphQL document.
type tokenKind int

const (
	tokEOF tokenKind = iota
	tokPunct
	tokName
	tokInt
	tokFloat
	tokString
)

// token is one lexical token and where it starts (1-based line and column,
// as GraphQL error locations give them).
type token struct {
	kind      tokenKind
	text      string // the punctuator, name, number text or decoded string
	line, col int
}

// SyntaxError is a document the lexer or parser cannot read.
type SyntaxError struct {
	Msg       string
	Line, Col int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("Syntax Error: %s (line %d, column %d)", e.Msg, e.Line, e.Col)
}

// lexer splits a document into tokens. Commas, whitespace, byte order
// marks and comments are insignificant, as the specification says.
type lexer struct {
	src             string
	pos, line, bol  int // bol: offset where the current line begins
	tokens, maxToks int
}

func newLexer(src string, maxTokens int) *lexer {
	return &lexer{src: src, line: 1, maxToks: maxTokens}
}

func (l *lexer) errAt(pos int, format string, args ...any) error {
	return &SyntaxError{Msg: fmt.Sprintf(format, args...), Line: l.line, Col: pos - l.bol + 1}
}

// next returns the next token.
func (l *lexer) next() (token, error) {
	l.skipIgnored()
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, line: l.line, col: l.pos - l.bol + 1}, nil
	}
	if l.tokens++; l.tokens > l.maxToks {
		return token{}, l.errAt(l.pos, "document has more than %d tokens", l.maxToks)
	}
	start := l.pos
	t := token{line: l.line, col: start - l.bol + 1}
	c := l.src[l.pos]
	switch {
	case strings.HasPrefix(l.src[l.pos:], "..."):
		l.pos += 3
		t.kind, t.text = tokPunct, "..."
	case strings.IndexByte("!$&():=@[]{}|", c) >= 0:
		l.pos++
		t.kind, t.text = tokPunct, string(c)
	case c == '_' || isLetter(c):
		for l.pos < len(l.src) && (l.src[l.pos] == '_' || isLetter(l.src[l.pos]) || isDigit(l.src[l.pos])) {
			l.pos++
		}
		t.kind, t.text = tokName, l.src[start:l.pos]
	case c == '-' || isDigit(c):
		return l.number(t)
	case c == '"':
		return l.stringToken(t)
	default:
		r, _ := utf8.DecodeRuneInString(l.src[l.pos:])
		return token{}, l.errAt(start, "unexpected character %q", r)
	}
	return t, nil
}

func (l *lexer) skipIgnored() {
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; {
		case c == '\n':
			l.pos++
			l.line, l.bol = l.line+1, l.pos
		case c == ' ' || c == '\t' || c == '\r' || c == ',':
			l.pos++
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case strings.HasPrefix(l.src[l.pos:], "\uFEFF"):
			l.pos += len("\uFEFF")
		default:
			return
		}
	}
}

// number reads an IntValue or FloatValue.
func (l *lexer) number(t token) (token, error) {
	start := l.pos
	if l.src[l.pos] == '-' {
		l.pos++
	}
	digits := func() int {
		n := 0
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
			n++
		}
		return n
	}
	if digits() == 0 {
		return token{}, l.errAt(start, "a number needs digits")
	}
	t.kind = tokInt
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		l.pos++
		if digits() == 0 {
			return token{}, l.errAt(start, "a number needs digits after '.'")
		}
		t.kind = tokFloat
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		l.pos++
		if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
			l.pos++
		}
		if digits() == 0 {
			return token{}, l.errAt(start, "a number needs digits in its exponent")
		}
		t.kind = tokFloat
	}
	if l.pos < len(l.src) && (l.src[l.pos] == '_' || isLetter(l.src[l.pos]) || l.src[l.pos] == '.') {
		return token{}, l.errAt(l.pos, "invalid number")
	}
	t.text = l.src[start:l.pos]
	return t, nil
}

// stringToken reads a "string" or a """block string""".
func (l *lexer) stringToken(t token) (token, error) {
	t.kind = tokString
	if strings.HasPrefix(l.src[l.pos:], `"""`) {
		return l.blockString(t)
	}
	start := l.pos
	l.pos++
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; c {
		case '"':
			l.pos++
			// GraphQL's escapes are JSON's.
			if err := json.Unmarshal([]byte(l.src[start:l.pos]), &t.text); err != nil {
				return token{}, l.errAt(start, "invalid string")
			}
			return t, nil
		case '\n', '\r':
			return token{}, l.errAt(start, "unterminated string")
		case '\\':
			l.pos += 2
		default:
			l.pos++
		}
	}
	return token{}, l.errAt(start, "unterminated string")
}

// blockString reads a block string; its indentation is kept as written,
// which is enough for argument values (the SDKs send none).
func (l *lexer) blockString(t token) (token, error) {
	start := l.pos
	end := strings.Index(l.src[start+3:], `"""`)
	for end >= 0 && l.src[start+3+end-1] == '\\' {
		next := strings.Index(l.src[start+3+end+3:], `"""`)
		if next < 0 {
			end = -1
			break
		}
		end += 3 + next
	}
	if end < 0 {
		return token{}, l.errAt(start, "unterminated block string")
	}
	body := l.src[start+3 : start+3+end]
	l.pos = start + 3 + end + 3
	l.line += strings.Count(body, "\n")
	if i := strings.LastIndexByte(body, '\n'); i >= 0 {
		l.bol = start + 3 + i + 1
	}
	t.text = strings.TrimSpace(strings.ReplaceAll(body, `\"""`, `"""`))
	return t, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
