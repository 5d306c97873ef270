package chfront

import (
	"strings"

	"github.com/weftdev/weft/internal/chdb"
)

// token is one lexical unit of a statement at any nesting depth.
type token struct {
	word       bool // an unquoted identifier or keyword
	start, end int
	depth      int // bracket depth before the token
}

// lexer splits SQL into just enough tokens to find top-level keywords: it
// knows quoting, comments and brackets, nothing else.
type lexer struct {
	s     string
	pos   int
	depth int
}

func (l *lexer) next() (token, bool) {
	l.skipSpaceAndComments()
	if l.pos >= len(l.s) {
		return token{}, false
	}
	t := token{start: l.pos, depth: l.depth}
	switch c := l.s[l.pos]; {
	case isWordStart(c):
		for l.pos < len(l.s) && isWordPart(l.s[l.pos]) {
			l.pos++
		}
		t.word = true
	case c == '\'' || c == '"' || c == '`':
		l.skipQuoted(c)
	case c == '(' || c == '[' || c == '{':
		l.depth++
		l.pos++
	case c == ')' || c == ']' || c == '}':
		if l.depth > 0 {
			l.depth--
		}
		l.pos++
	default:
		l.pos++
	}
	t.end = l.pos
	return t, true
}

func (l *lexer) skipQuoted(q byte) {
	l.pos++
	for l.pos < len(l.s) {
		switch l.s[l.pos] {
		case '\\':
			l.pos += 2
			continue
		case q:
			// A doubled quote is an escaped quote inside the literal.
			if l.pos+1 < len(l.s) && l.s[l.pos+1] == q {
				l.pos += 2
				continue
			}
			l.pos++
			return
		}
		l.pos++
	}
	l.pos = len(l.s)
}

func (l *lexer) skipSpaceAndComments() {
	for l.pos < len(l.s) {
		rest := l.s[l.pos:]
		switch {
		case isSpace(rest[0]):
			l.pos++
		case strings.HasPrefix(rest, "--") || strings.HasPrefix(rest, "#"):
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				l.pos += i + 1
			} else {
				l.pos = len(l.s)
			}
		case strings.HasPrefix(rest, "/*"):
			if i := strings.Index(rest[2:], "*/"); i >= 0 {
				l.pos += i + 4
			} else {
				l.pos = len(l.s)
			}
		default:
			return
		}
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isWordPart(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' }

// firstKeyword returns the statement's first word, upper-cased.
func firstKeyword(sql string) string {
	l := lexer{s: sql}
	t, ok := l.next()
	if !ok || !t.word {
		return ""
	}
	return strings.ToUpper(sql[t.start:t.end])
}

// dataInsert is an INSERT whose rows follow the statement as data.
type dataInsert struct {
	head      string // "INSERT INTO t (a, b)", up to SETTINGS, FORMAT or VALUES
	settings  string // "SETTINGS ..." when present
	format    string // input format; Values for a VALUES insert
	dataStart int    // where inline data begins in the parsed text
}

// parseDataInsert recognises "INSERT ... [SETTINGS ...] FORMAT f <data>" and
// "INSERT ... VALUES <data>". INSERT ... SELECT and FROM INFILE return false:
// they carry no data.
func parseDataInsert(sql string) (dataInsert, bool) {
	if firstKeyword(sql) != "INSERT" {
		return dataInsert{}, false
	}
	l := lexer{s: sql}
	var ins dataInsert
	settingsAt := -1
	for {
		t, ok := l.next()
		if !ok {
			return dataInsert{}, false
		}
		if !t.word || t.depth > 0 {
			continue
		}
		switch strings.ToUpper(sql[t.start:t.end]) {
		case "SETTINGS":
			if settingsAt < 0 {
				settingsAt = t.start
			}
		case "FORMAT":
			name, ok := l.next()
			if !ok || !name.word {
				return dataInsert{}, false
			}
			ins.format = sql[name.start:name.end]
			ins.dataStart = skipToData(sql, name.end)
			return ins.withHead(sql, settingsAt, t.start), true
		case "VALUES":
			ins.format = "Values"
			ins.dataStart = t.end
			return ins.withHead(sql, settingsAt, t.start), true
		case "SELECT", "WITH", "INFILE", "WATCH":
			return dataInsert{}, false
		}
	}
}

func (ins dataInsert) withHead(sql string, settingsAt, keywordAt int) dataInsert {
	headEnd := keywordAt
	if settingsAt >= 0 {
		headEnd = settingsAt
		ins.settings = strings.TrimSpace(sql[settingsAt:keywordAt])
	}
	ins.head = strings.TrimSpace(sql[:headEnd])
	return ins
}

// skipToData mirrors ClickHouse: data starts after the format name, blanks on
// its line, and one line break.
func skipToData(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f') {
		i++
	}
	if i < len(s) && s[i] == '\r' {
		i++
	}
	if i < len(s) && s[i] == '\n' {
		i++
	}
	return i
}

// fromInfile renders the INSERT reading its data from path instead. Clauses
// go on lines of their own so a trailing "--" comment cannot swallow them.
func (ins dataInsert) fromInfile(path string) string {
	var b strings.Builder
	b.WriteString(ins.head)
	b.WriteString("\nFROM INFILE ")
	b.WriteString(chdb.QuoteString(path))
	if ins.settings != "" {
		b.WriteString("\n")
		b.WriteString(ins.settings)
	}
	b.WriteString("\nFORMAT ")
	b.WriteString(ins.format)
	return b.String()
}
