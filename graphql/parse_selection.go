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
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var out []Selection
	for !p.is("}") {
		s, err := p.selection()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, p.fail("a selection set must select at least one field")
	}
	return out, p.advance()
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
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var args []Argument
	for !p.is(")") {
		a, err := p.argument(constant)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	if len(args) == 0 {
		return nil, p.fail("an argument list must not be empty")
	}
	return args, p.advance()
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
	if err := p.advance(); err != nil {
		return nil, err
	}
	out := List{}
	for !p.is("]") {
		v, err := p.value(constant)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, p.advance()
}

func (p *parser) object(constant bool) (Value, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	out := Object{}
	for !p.is("}") {
		a, err := p.argument(constant)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, p.advance()
}
