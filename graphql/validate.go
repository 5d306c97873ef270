package graphql

import (
	"slices"
	"strconv"
)

// validator checks a document against the schema before anything runs,
// so a document weft does not serve fails whole, with every field it does
// not know named, and no resolver is called for it.
type validator struct {
	s      *Schema
	doc    *Document
	errs   []*Error
	active map[string]bool // fragments being expanded, to refuse cycles
	visits int             // selections checked, fragments expanded each time
	vars   map[string]bool // the operation's declared variables
}

const (
	// maxErrors caps the errors one response lists.
	maxErrors = 20
	// maxVisits bounds the selections a document expands to: fragments
	// spread twice per level would otherwise grow exponentially.
	maxVisits = 20000
)

func (v *validator) add(e *Error) {
	if len(v.errs) < maxErrors {
		v.errs = append(v.errs, e)
	}
}

// validate checks op and the fragments it uses.
func (s *Schema) validate(doc *Document, op *Operation) []*Error {
	v := &validator{s: s, doc: doc, active: map[string]bool{}, vars: map[string]bool{}}
	root := s.rootType(op.Kind)
	if root == nil {
		return []*Error{{Message: "weft serves no " + op.Kind + " operations", Locations: []Location{{op.Line, op.Col}}}}
	}
	for _, d := range op.Variables {
		if v.vars[d.Name] {
			v.add(&Error{Message: "There can be only one variable named \"$" + d.Name + "\"."})
		}
		v.vars[d.Name] = true
	}
	v.selections(root, op.Selection)
	return v.errs
}

func (s *Schema) rootType(kind string) *Type {
	switch kind {
	case "query":
		return s.Types[s.Query]
	case "mutation":
		if s.Mutation != "" {
			return s.Types[s.Mutation]
		}
	}
	return nil
}

func (v *validator) selections(t *Type, sels []Selection) {
	for _, sel := range sels {
		if v.visits++; v.visits > maxVisits {
			if v.visits == maxVisits+1 {
				v.add(&Error{Message: "The document expands to more than " + strconv.Itoa(maxVisits) + " selections; send a smaller one."})
			}
			return
		}
		v.directives(sel.Directives)
		switch {
		case sel.Field != nil:
			v.field(t, sel.Field)
		case sel.Inline != nil:
			v.fragment(t, sel.Inline)
		default:
			v.spread(t, sel.Spread)
		}
	}
}

func (v *validator) field(t *Type, f *Field) {
	if f.Name == "__typename" {
		if f.Selection != nil || f.Arguments != nil {
			v.add(errorf(f, "Field \"__typename\" takes no arguments and no selection."))
		}
		return
	}
	def, ok := t.Fields[f.Name]
	if !ok {
		msg := "Cannot query field " + strconv.Quote(f.Name) + " on type " + strconv.Quote(t.Name) + "."
		if t.Hint != "" {
			msg += " " + t.Hint
		}
		v.add(errorf(f, "%s Fields of %s weft serves: %s.", msg, t.Name, t.fieldNames()))
		return
	}
	for _, a := range f.Arguments {
		if !slices.Contains(def.Args, a.Name) {
			v.add(errorf(f, "Unknown argument %q on field \"%s.%s\".", a.Name, t.Name, f.Name))
		}
		v.usedVariables(a.Value)
	}
	switch child := v.s.Types[def.Type]; {
	case child == nil && f.Selection != nil:
		v.add(errorf(f, "Field %q must not have a selection since it returns a scalar.", f.Name))
	case child != nil && f.Selection == nil:
		v.add(errorf(f, "Field %q of type %q must have a selection of subfields.", f.Name, def.Type))
	case child != nil:
		v.selections(child, f.Selection)
	}
}

func (v *validator) fragment(t *Type, fr *Fragment) {
	if fr.On != "" && fr.On != t.Name {
		v.add(&Error{Message: "Fragment on " + strconv.Quote(fr.On) + " cannot be spread here: the parent type is " + strconv.Quote(t.Name) + "."})
		return
	}
	v.selections(t, fr.Selection)
}

func (v *validator) spread(t *Type, name string) {
	fr, ok := v.doc.Fragments[name]
	switch {
	case !ok:
		v.add(&Error{Message: "Unknown fragment " + strconv.Quote(name) + "."})
	case v.active[name]:
		v.add(&Error{Message: "Cannot spread fragment " + strconv.Quote(name) + " within itself."})
	default:
		v.active[name] = true
		v.fragment(t, fr)
		delete(v.active, name)
	}
}

func (v *validator) directives(ds []Directive) {
	for _, d := range ds {
		if d.Name != "skip" && d.Name != "include" {
			v.add(&Error{Message: "Unknown directive \"@" + d.Name + "\"; weft knows @skip and @include."})
			continue
		}
		if len(d.Arguments) != 1 || d.Arguments[0].Name != "if" {
			v.add(&Error{Message: "Directive \"@" + d.Name + "\" takes exactly one argument, \"if\"."})
			continue
		}
		v.usedVariables(d.Arguments[0].Value)
	}
}

// usedVariables refuses variables the operation does not declare.
func (v *validator) usedVariables(val Value) {
	switch val := val.(type) {
	case Variable:
		if !v.vars[val.Name] {
			v.add(&Error{Message: "Variable \"$" + val.Name + "\" is not defined by the operation."})
		}
	case List:
		for _, item := range val {
			v.usedVariables(item)
		}
	case Object:
		for _, a := range val {
			v.usedVariables(a.Value)
		}
	}
}
