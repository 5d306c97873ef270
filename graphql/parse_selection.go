package graphql

import (
	"strconv"
)

// selectionSet reads { selection ... }, which must not be empty.
func (p *parser) selectionSet() ([]Selection, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	var out []Selection
	err := p.seq("{", "}", "a selection set must select at least one field", func() error {
		s, err := p.selection()
		out = append(out, s)
		return err
	})
	return out, err
}

func (p *parser) selection() (Selection, error) {
	if ok, err := p.skip("..."); err != nil || !ok {
		if err != nil {
			return Selection{}, err
		}
		return p.field()
	}
	if p.tok.kind == tokName && p.tok.text != "on" {
		name, err := p.name()
		if err != nil {
			return Selection{}, err
		}
		dirs, err := p.directives()
		return Selection{Spread: name, Directives: dirs}, err
	}
	on, err := p.typeCondition(false)
	if err != nil {
		return Selection{}, err
	}
	dirs, err := p.directives()
	if err != nil {
		return Selection{}, err
	}
	sel, err := p.selectionSet()
	return Selection{Inline: &Fragment{On: on, Selection: sel}, Directives: dirs}, err
}

func (p *parser) field() (Selection, error) {
	f := &Field{Line: p.tok.line, Col: p.tok.col}
	var err error
	if f.Name, err = p.name(); err != nil {
		return Selection{}, err
	}
	if ok, err := p.skip(":"); err != nil {
		return Selection{}, err
	} else if ok {
		f.Alias = f.Name
		if f.Name, err = p.name(); err != nil {
			return Selection{}, err
		}
	}
	if p.is("(") {
		if f.Arguments, err = p.arguments(false); err != nil {
			return Selection{}, err
		}
	}
	dirs, err := p.directives()
	if err != nil {
		return Selection{}, err
	}
	if p.is("{") {
		if f.Selection, err = p.selectionSet(); err != nil {
			return Selection{}, err
		}
	}
	return Selection{Field: f, Directives: dirs}, nil
}

// arguments reads (name: value ...); constant forbids variables (in
// default values).
func (p *parser) arguments(constant bool) ([]Argument, error) {
	return p.namedValues("(", ")", "an argument list must not be empty", constant)
}

// namedValues reads name: value pairs between opening and closing: an
// argument list, or an input object.
func (p *parser) namedValues(opening, closing, emptyMsg string, constant bool) ([]Argument, error) {
	var out []Argument
	err := p.seq(opening, closing, emptyMsg, func() error {
		a, err := p.argument(constant)
		out = append(out, a)
		return err
	})
	return out, err
}

func (p *parser) argument(constant bool) (Argument, error) {
	name, err := p.name()
	if err != nil {
		return Argument{}, err
	}
	if err := p.expect(":"); err != nil {
		return Argument{}, err
	}
	v, err := p.value(constant)
	return Argument{Name: name, Value: v}, err
}

// directives reads @name(args) ...; weft knows @skip and @include only.
func (p *parser) directives() ([]Directive, error) {
	var out []Directive
	for p.is("@") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		d := Directive{}
		var err error
		if d.Name, err = p.name(); err != nil {
			return nil, err
		}
		if p.is("(") {
			if d.Arguments, err = p.arguments(false); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// value reads an input value.
func (p *parser) value(constant bool) (Value, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.tok
	switch {
	case p.is("$"):
		if constant {
			return nil, p.fail("a default value cannot use a variable")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		n, err := p.name()
		return Variable{Name: n}, err
	case p.is("["):
		return p.list(constant)
	case p.is("{"):
		return p.object(constant)
	case t.kind == tokInt, t.kind == tokFloat, t.kind == tokString, t.kind == tokName:
		v, err := p.scalar(t)
		if err != nil {
			return nil, err
		}
		return v, p.advance()
	}
	return nil, p.fail("expected a value, found " + p.describe())
}

func (p *parser) scalar(t token) (Value, error) {
	switch t.kind {
	case tokInt:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, p.fail("integer " + t.text + " is out of range")
		}
		return Scalar{V: n}, nil
	case tokFloat:
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, p.fail("number " + t.text + " is out of range")
		}
		return Scalar{V: f}, nil
	case tokString:
		return Scalar{V: t.text}, nil
	}
	switch t.text {
	case "true", "false":
		return Scalar{V: t.text == "true"}, nil
	case "null":
		return Null{}, nil
	}
	return Scalar{V: EnumValue(t.text)}, nil
}

func (p *parser) list(constant bool) (Value, error) {
	out := List{}
	err := p.seq("[", "]", "", func() error {
		v, err := p.value(constant)
		out = append(out, v)
		return err
	})
	return out, err
}

func (p *parser) object(constant bool) (Value, error) {
	fields, err := p.namedValues("{", "}", "", constant)
	return append(Object{}, fields...), err
}

// seq reads the opening punctuator, items until the closing one, and the
// closing one. The end of the document is no item, so it fails the item
// and ends the loop. A non-empty emptyMsg refuses a sequence of no items.
func (p *parser) seq(opening, closing, emptyMsg string, item func() error) error {
	if err := p.expect(opening); err != nil {
		return err
	}
	n := 0
	for ; !p.is(closing); n++ {
		if err := item(); err != nil {
			return err
		}
	}
	if n == 0 && emptyMsg != "" {
		return p.fail(emptyMsg)
	}
	return p.advance()
}
