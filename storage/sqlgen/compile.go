package sqlgen

import (
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// typed is a compiled SQL expression and its type.
type typed struct {
	sql string
	typ Type
}

// compiler turns a query expression into SQL over the calls table. The
// expression has been validated by validateExpr, so field lookups succeed.
type compiler struct {
	d  Dialect
	b  *builder
	fs *fields
}

// validateExpr rejects unknown fields (ErrFieldNotAllowed) and container
// literals (ErrInvalidArgument) anywhere in e, before anything is bound.
func validateExpr(e querylang.Expr) error {
	var err error
	querylang.Walk(e, func(n querylang.Expr) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *querylang.GetField:
			if _, lerr := lookupField(x.Path); lerr != nil {
				err = fmt.Errorf("query: %w", lerr)
			}
		case *querylang.Literal:
			if !x.IsScalar() {
				err = fmt.Errorf("query: calls queries accept only string, number, boolean or null literals, not objects or arrays: %w",
					storage.ErrInvalidArgument)
			}
		}
		return true
	})
	return err
}

// predicate compiles e in a boolean context.
func (c *compiler) predicate(e querylang.Expr) (string, error) {
	v, err := c.value(e)
	if err != nil {
		return "", err
	}
	return truthy(v), nil
}

// truthy turns a value into a condition the way a filter reads it: NULL
// stays NULL, zero and the empty string are false.
func truthy(v typed) string {
	switch v.typ {
	case TypeBool:
		return v.sql
	case TypeInt, TypeFloat:
		return "(" + v.sql + " <> 0)"
	case TypeString:
		return "(" + v.sql + " <> '')"
	case typeNull:
		return sqlNullBool
	}
	return "(CASE WHEN " + v.sql + " IS NULL THEN NULL ELSE TRUE END)"
}

func (c *compiler) value(e querylang.Expr) (typed, error) {
	switch n := e.(type) {
	case *querylang.And:
		return c.logical(n.Operands, " AND ")
	case *querylang.Or:
		return c.logical(n.Operands, " OR ")
	case *querylang.Not:
		p, err := c.predicate(n.Operand)
		return typed{"(NOT " + p + ")", TypeBool}, err
	case *querylang.Compare:
		return c.compare(n)
	case *querylang.In:
		return c.in(n)
	case *querylang.Contains:
		return c.contains(n.Input, n.Substr, n.CaseInsensitive, false)
	case *querylang.ContainsToken:
		return c.contains(n.Input, n.Substr, n.CaseInsensitive, true)
	case *querylang.GetField:
		f, err := lookupField(n.Path)
		return typed{c.fs.value(f), f.typ}, err
	case *querylang.Literal:
		return c.literal(n), nil
	case *querylang.Convert:
		return c.convert(n.Input, n.To)
	}
	return typed{}, fmt.Errorf("query: unsupported node %T: %w", e, storage.ErrInvalidArgument)
}

func (c *compiler) logical(ops []querylang.Expr, sep string) (typed, error) {
	return combine(ops, sep, c.predicate)
}

// combine renders $and or $or: each operand as a predicate, joined by sep
// (" AND " or " OR "); a single operand stands alone. Both the calls and
// the table compilers use it.
func combine(ops []querylang.Expr, sep string, predicate func(querylang.Expr) (string, error)) (typed, error) {
	preds := make([]string, len(ops))
	for i, op := range ops {
		p, err := predicate(op)
		if err != nil {
			return typed{}, err
		}
		preds[i] = p
	}
	if len(preds) == 1 {
		return typed{preds[0], TypeBool}, nil
	}
	return typed{"(" + strings.Join(preds, sep) + ")", TypeBool}, nil
}

// literal binds a scalar literal; null stays an unbound NULL.
func (c *compiler) literal(l *querylang.Literal) typed {
	t := literalType(l)
	if t == typeNull {
		return typed{"NULL", typeNull}
	}
	return typed{c.b.bind(l.Value, t), t}
}

func literalType(l *querylang.Literal) Type {
	switch l.Value.(type) {
	case bool:
		return TypeBool
	case int64:
		return TypeInt
	case float64:
		return TypeFloat
	case string:
		return TypeString
	}
	return typeNull
}

// typeOf is the type e compiles to under cast, computed without binding
// anything so that operands can be checked before they are rendered.
func typeOf(e querylang.Expr, cast querylang.CastType) Type {
	switch n := e.(type) {
	case *querylang.Literal:
		return literalType(n)
	case *querylang.GetField:
		f, _ := lookupField(n.Path)
		if cast != "" && f.castable() {
			return castType(cast)
		}
		return f.typ
	case *querylang.Convert:
		return castType(n.To)
	}
	return TypeBool
}

func castType(c querylang.CastType) Type {
	switch c {
	case querylang.CastExists:
		return TypeBool
	case querylang.CastInt, querylang.CastBool:
		return TypeInt
	case querylang.CastDouble:
		return TypeFloat
	}
	return TypeString
}

// operand compiles e, applying an inferred cast when e is a field that
// takes one.
func (c *compiler) operand(e querylang.Expr, cast querylang.CastType) (typed, error) {
	if g, ok := e.(*querylang.GetField); ok && cast != "" {
		if f, _ := lookupField(g.Path); f.castable() {
			return c.convert(e, cast)
		}
	}
	return c.value(e)
}

// convert renders $convert. Numbers and booleans convert through their
// text form, as the reference server does.
func (c *compiler) convert(input querylang.Expr, to querylang.CastType) (typed, error) {
	if to == querylang.CastExists {
		return c.exists(input)
	}
	v, err := c.value(input)
	if err != nil {
		return typed{}, err
	}
	if v.typ == typeNull {
		return typed{"NULL", castType(to)}, nil
	}
	switch {
	case to == querylang.CastString:
		return typed{c.d.ToText(v.sql, v.typ), TypeString}, nil
	case to == querylang.CastInt && v.typ == TypeInt, to == querylang.CastDouble && v.typ == TypeFloat:
		return v, nil
	case to == querylang.CastBool && v.typ == TypeBool:
		return typed{boolToInt(v.sql), TypeInt}, nil
	}
	text := c.d.ToText(v.sql, v.typ)
	switch to {
	case querylang.CastInt:
		return typed{c.d.ParseInt(text), TypeInt}, nil
	case querylang.CastDouble:
		return typed{c.d.ParseFloat(text), TypeFloat}, nil
	}
	return typed{c.d.ParseBool(text), TypeInt}, nil
}

func (c *compiler) exists(input querylang.Expr) (typed, error) {
	if g, ok := input.(*querylang.GetField); ok {
		f, err := lookupField(g.Path)
		return typed{c.fs.exists(f), TypeBool}, err
	}
	v, err := c.value(input)
	if v.typ == typeNull {
		return typed{"FALSE", TypeBool}, err
	}
	return typed{"(" + v.sql + " IS NOT NULL)", TypeBool}, err
}

func boolToInt(expr string) string {
	return "(CASE WHEN " + expr + " THEN 1 WHEN NOT " + expr + " THEN 0 END)"
}
