package template

import "strings"

// parser splits a template into literal text and variables while
// following JSON string boundaries, so each variable knows whether it
// stands inside a string.
type parser struct {
	src      string
	pos      int
	inString bool
	lit      strings.Builder
	parts    []part
}

func (p *parser) run() error {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '$':
			if err := p.dollar(); err != nil {
				return err
			}
		case c == '"':
			p.inString = !p.inString
			p.literal(1)
		case c == '\\' && p.inString:
			// An escape inside a string: the next byte is never a quote
			// that ends it, nor the start of a variable.
			p.literal(min(2, len(p.src)-p.pos))
		default:
			p.literal(1)
		}
	}
	p.flush()
	return nil
}

// literal copies n source bytes to the pending literal text.
func (p *parser) literal(n int) {
	p.lit.WriteString(p.src[p.pos : p.pos+n])
	p.pos += n
}

func (p *parser) flush() {
	if p.lit.Len() > 0 {
		p.parts = append(p.parts, part{text: p.lit.String()})
		p.lit.Reset()
	}
}

// dollar reads what follows a $: $$, ${name}, $NAME, or a lone $.
func (p *parser) dollar() error {
	start := p.pos
	rest := p.src[p.pos+1:]
	switch {
	case strings.HasPrefix(rest, "$"):
		p.lit.WriteByte('$')
		p.pos += 2
	case strings.HasPrefix(rest, "{"):
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return &SyntaxError{Offset: start, Msg: "${ is not closed with }; write $$ for a literal $"}
		}
		name := rest[1:end]
		if err := checkBraced(name, start); err != nil {
			return err
		}
		p.variable(name, start)
		p.pos += 1 + end + 1
	case len(rest) > 0 && identStart(rest[0]):
		n := 1
		for n < len(rest) && identPart(rest[n]) {
			n++
		}
		p.variable(rest[:n], start)
		p.pos += 1 + n
	default:
		p.lit.WriteByte('$')
		p.pos++
	}
	return nil
}

func (p *parser) variable(name string, offset int) {
	p.flush()
	p.parts = append(p.parts, part{name: name, inString: p.inString, offset: offset})
}

// checkBraced refuses names no variable can have: empty, with a brace,
// a quote or a control character, or starting with a non-letter.
func checkBraced(name string, offset int) error {
	switch {
	case name == "":
		return &SyntaxError{Offset: offset, Msg: "${} names no variable"}
	case !identStart(name[0]):
		return &SyntaxError{Offset: offset, Msg: "variable ${" + name + "} must start with a letter or _"}
	case strings.ContainsAny(name, "{\"\\") || strings.IndexFunc(name, func(r rune) bool { return r < 0x20 }) >= 0:
		return &SyntaxError{Offset: offset, Msg: "variable name " + string(String(name)) + " holds a brace, quote, backslash or control character"}
	}
	return nil
}

func identStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func identPart(c byte) bool { return identStart(c) || (c >= '0' && c <= '9') }
