package graphql

import (
	"strconv"
)

// Parser limits: the documents the SDKs send have a few dozen tokens and
// nest four deep; these bound what a hostile one costs.
const (
	maxTokens = 10000
	maxDepth  = 32
)

// parser is a recursive-descent parser over the lexer's tokens with one
// token of lookahead.
type parser struct {
	lx    *lexer
	tok   token
	depth int
}

// Parse reads an executable document: operations (query and mutation,
// with variables) and fragments. Subscriptions and type system definitions
// are syntax errors here, as weft executes neither.
func Parse(src string) (*Document, error) {
	p := &parser{lx: newLexer(src, maxTokens)}
	if err := p.advance(); err != nil {
		return nil, err
	}
	doc := &Document{Fragments: map[string]*Fragment{}}
	for p.tok.kind != tokEOF {
		if err := p.definition(doc); err != nil {
			return nil, err
		}
	}
	if len(doc.Operations) == 0 {
		return nil, &SyntaxError{Msg: "the document has no operation", Line: p.tok.line, Col: p.tok.col}
	}
	return doc, nil
}

func (p *parser) advance() error {
	t, err := p.lx.next()
	p.tok = t
	return err
}

func (p *parser) fail(msg string) error {
	return &SyntaxError{Msg: msg, Line: p.tok.line, Col: p.tok.col}
}

func (p *parser) describe() string {
	switch p.tok.kind {
	case tokEOF:
		return "end of document"
	case tokString:
		return "a string"
	}
	return strconv.Quote(p.tok.text)
}

func (p *parser) is(punct string) bool { return p.tok.kind == tokPunct && p.tok.text == punct }

// expect consumes the punctuator punct.
func (p *parser) expect(punct string) error {
	if !p.is(punct) {
		return p.fail("expected \"" + punct + "\", found " + p.describe())
	}
	return p.advance()
}

// skip consumes punct when it is next and says whether it was.
func (p *parser) skip(punct string) (bool, error) {
	if !p.is(punct) {
		return false, nil
	}
	return true, p.advance()
}

// name consumes a name token.
func (p *parser) name() (string, error) {
	if p.tok.kind != tokName {
		return "", p.fail("expected a name, found " + p.describe())
	}
	n := p.tok.text
	return n, p.advance()
}

func (p *parser) definition(doc *Document) error {
	if p.is("{") {
		op := &Operation{Kind: "query", Line: p.tok.line, Col: p.tok.col}
		var err error
		op.Selection, err = p.selectionSet()
		doc.Operations = append(doc.Operations, op)
		return err
	}
	if p.tok.kind != tokName {
		return p.fail("expected an operation or a fragment, found " + p.describe())
	}
	switch p.tok.text {
	case "query", "mutation":
		op, err := p.operation()
		doc.Operations = append(doc.Operations, op)
		return err
	case "fragment":
		return p.fragment(doc)
	}
	return p.fail("expected query, mutation or fragment, found " + p.describe() + " (subscriptions and schema definitions are not served)")
}

func (p *parser) operation() (*Operation, error) {
	op := &Operation{Kind: p.tok.text, Line: p.tok.line, Col: p.tok.col}
	if err := p.advance(); err != nil {
		return op, err
	}
	if p.tok.kind == tokName {
		op.Name = p.tok.text
		if err := p.advance(); err != nil {
			return op, err
		}
	}
	var err error
	if p.is("(") {
		if op.Variables, err = p.variableDefs(); err != nil {
			return op, err
		}
	}
	if _, err := p.directives(); err != nil {
		return op, err
	}
	op.Selection, err = p.selectionSet()
	return op, err
}

func (p *parser) variableDefs() ([]VariableDef, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var defs []VariableDef
	for !p.is(")") {
		if err := p.expect("$"); err != nil {
			return nil, err
		}
		var d VariableDef
		var err error
		if d.Name, err = p.name(); err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		if d.Type, d.NonNull, err = p.typeRef(); err != nil {
			return nil, err
		}
		if ok, err := p.skip("="); err != nil {
			return nil, err
		} else if ok {
			if d.Default, err = p.value(true); err != nil {
				return nil, err
			}
			d.HasValue = true
		}
		if _, err := p.directives(); err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return defs, p.advance()
}

// typeRef reads a type such as String!, [ID] or [[Int!]!]!.
func (p *parser) typeRef() (string, bool, error) {
	if err := p.enter(); err != nil {
		return "", false, err
	}
	defer p.leave()
	var text string
	if ok, err := p.skip("["); err != nil {
		return "", false, err
	} else if ok {
		inner, _, err := p.typeRef()
		if err != nil {
			return "", false, err
		}
		if err := p.expect("]"); err != nil {
			return "", false, err
		}
		text = "[" + inner + "]"
	} else {
		n, err := p.name()
		if err != nil {
			return "", false, err
		}
		text = n
	}
	nonNull, err := p.skip("!")
	if nonNull {
		text += "!"
	}
	return text, nonNull, err
}

func (p *parser) fragment(doc *Document) error {
	if err := p.advance(); err != nil {
		return err
	}
	name, err := p.name()
	if err != nil {
		return err
	}
	if name == "on" {
		return p.fail(`a fragment cannot be named "on"`)
	}
	if _, dup := doc.Fragments[name]; dup {
		return p.fail("there can be only one fragment named " + strconv.Quote(name))
	}
	f := &Fragment{Name: name}
	if f.On, err = p.typeCondition(true); err != nil {
		return err
	}
	if _, err := p.directives(); err != nil {
		return err
	}
	f.Selection, err = p.selectionSet()
	doc.Fragments[name] = f
	return err
}

// typeCondition reads "on Type"; it is required on named fragments.
func (p *parser) typeCondition(required bool) (string, error) {
	if p.tok.kind != tokName || p.tok.text != "on" {
		if required {
			return "", p.fail(`expected "on", found ` + p.describe())
		}
		return "", nil
	}
	if err := p.advance(); err != nil {
		return "", err
	}
	return p.name()
}

// enter counts one level of nesting and refuses documents nested deeper
// than maxDepth, so no input exhausts the stack.
func (p *parser) enter() error {
	if p.depth++; p.depth > maxDepth {
		return p.fail("the document nests deeper than " + strconv.Itoa(maxDepth) + " levels")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }
