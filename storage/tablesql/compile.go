package tablesql

import (
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/storage/sqlgen"
)

// typeNull is the type of a null literal, which is never bound.
const typeNull sqlgen.Type = -1

// sqlNull is a boolean NULL: the value of comparisons that never match.
const sqlNull = "(NULL = 1)"

type typed struct {
	sql string
	typ sqlgen.Type
}

// compiler renders a query expression over one table.
type compiler struct {
	b *binder
	t Table
}

func (c *compiler) predicate(e querylang.Expr) (string, error) {
	v, err := c.value(e, "")
	if err != nil {
		return "", err
	}
	switch v.typ {
	case sqlgen.TypeBool:
		return v.sql, nil
	case sqlgen.TypeInt, sqlgen.TypeFloat:
		return "(" + v.sql + " <> 0)", nil
	case sqlgen.TypeString:
		return "(" + v.sql + " <> '')", nil
	case sqlgen.TypeTime:
		return "(" + v.sql + " IS NOT NULL)", nil
	}
	return sqlNull, nil
}

// value compiles e; cast is the type a peer literal imposes on a JSON path.
func (c *compiler) value(e querylang.Expr, cast querylang.CastType) (typed, error) {
	switch n := e.(type) {
	case *querylang.And:
		return c.logical(n.Operands, " AND ")
	case *querylang.Or:
		return c.logical(n.Operands, " OR ")
	case *querylang.Not:
		p, err := c.predicate(n.Operand)
		return typed{"(NOT " + p + ")", sqlgen.TypeBool}, err
	case *querylang.Compare:
		return c.compare(n)
	case *querylang.In:
		return c.in(n)
	case *querylang.Contains:
		return c.contains(n.Input, n.Substr, n.CaseInsensitive, false)
	case *querylang.ContainsToken:
		return c.contains(n.Input, n.Substr, n.CaseInsensitive, true)
	case *querylang.GetField:
		return c.field(n.Path, cast)
	case *querylang.Literal:
		return c.literal(n)
	case *querylang.Convert:
		return c.convert(n)
	}
	return typed{}, fmt.Errorf("query: unsupported node %T: %w", e, storage.ErrInvalidArgument)
}

func (c *compiler) logical(ops []querylang.Expr, sep string) (typed, error) {
	preds := make([]string, len(ops))
	for i, op := range ops {
		p, err := c.predicate(op)
		if err != nil {
			return typed{}, err
		}
		preds[i] = p
	}
	return typed{"(" + strings.Join(preds, sep) + ")", sqlgen.TypeBool}, nil
}

func (c *compiler) field(path string, cast querylang.CastType) (typed, error) {
	if col, ok := c.t.column(path); ok {
		return typed{col.Name, columnType(col.Kind)}, nil
	}
	col, segs, ok := jsonPath(c.t, path)
	if !ok {
		return typed{}, unknownField(c.t, path)
	}
	d := c.b.d
	v := d.JSONValue(col.Name, c.b.bind(d.JSONPath(segs), sqlgen.TypeString))
	return castText(d, v, cast), nil
}

func columnType(k Kind) sqlgen.Type {
	switch k {
	case Time:
		return sqlgen.TypeTime
	case Float:
		return sqlgen.TypeFloat
	}
	return sqlgen.TypeString
}

// castText parses a text value to the cast type; unparseable text is NULL.
func castText(d sqlgen.Dialect, s string, cast querylang.CastType) typed {
	switch cast {
	case querylang.CastInt:
		return typed{d.ParseInt(s), sqlgen.TypeInt}
	case querylang.CastDouble:
		return typed{d.ParseFloat(s), sqlgen.TypeFloat}
	case querylang.CastBool:
		return typed{"(" + d.ParseBool(s) + " = 1)", sqlgen.TypeBool}
	}
	return typed{s, sqlgen.TypeString}
}

func (c *compiler) literal(l *querylang.Literal) (typed, error) {
	switch l.Value.(type) {
	case nil:
		return typed{"NULL", typeNull}, nil
	case bool:
		return typed{c.b.bind(l.Value, sqlgen.TypeBool), sqlgen.TypeBool}, nil
	case int64:
		return typed{c.b.bind(l.Value, sqlgen.TypeInt), sqlgen.TypeInt}, nil
	case float64:
		return typed{c.b.bind(l.Value, sqlgen.TypeFloat), sqlgen.TypeFloat}, nil
	case string:
		return typed{c.b.bind(l.Value, sqlgen.TypeString), sqlgen.TypeString}, nil
	}
	return typed{}, fmt.Errorf("query: literals must be strings, numbers, booleans or null, not objects or arrays: %w", storage.ErrInvalidArgument)
}

func (c *compiler) convert(n *querylang.Convert) (typed, error) {
	if n.To == querylang.CastExists {
		if g, ok := n.Input.(*querylang.GetField); ok {
			if col, segs, ok := jsonPath(c.t, g.Path); ok {
				path := c.b.bind(c.b.d.JSONPath(segs), sqlgen.TypeString)
				return typed{c.b.d.JSONExists(col.Name, path), sqlgen.TypeBool}, nil
			}
		}
		v, err := c.value(n.Input, "")
		return typed{"(" + v.sql + " IS NOT NULL)", sqlgen.TypeBool}, err
	}
	v, err := c.value(n.Input, "")
	if err != nil || v.typ == typeNull {
		return v, err
	}
	return castText(c.b.d, c.b.d.ToText(v.sql, v.typ), n.To), nil
}

func (c *compiler) in(n *querylang.In) (typed, error) {
	cast, _ := querylang.SharedCast(n.List)
	op, err := c.value(n.Operand, cast)
	if err != nil {
		return typed{}, err
	}
	var elems []string
	for _, e := range n.List {
		mark := len(c.b.args)
		v, err := c.element(op, e)
		if err != nil {
			return typed{}, err
		}
		if !comparable(op.typ, v.typ) {
			c.b.args = c.b.args[:mark]
			continue
		}
		elems = append(elems, v.sql)
	}
	if len(elems) == 0 {
		return typed{"FALSE", sqlgen.TypeBool}, nil
	}
	return typed{"(" + op.sql + " IN (" + strings.Join(elems, ", ") + "))", sqlgen.TypeBool}, nil
}

// element compiles one $in list item; items compared with a datetime
// column convert like a comparison's literal.
func (c *compiler) element(op typed, e querylang.Expr) (typed, error) {
	if lit, ok := e.(*querylang.Literal); ok && op.typ == sqlgen.TypeTime && lit.Value != nil {
		if t, ok := timeValue(lit.Value); ok {
			return typed{c.b.bind(t, sqlgen.TypeTime), sqlgen.TypeTime}, nil
		}
		return typed{"NULL", typeNull}, nil
	}
	return c.value(e, "")
}

func (c *compiler) contains(input, substr querylang.Expr, ci, token bool) (typed, error) {
	mark := len(c.b.args)
	hay, err := c.value(input, "")
	if err != nil {
		return typed{}, err
	}
	needle, err := c.value(substr, "")
	if err != nil {
		return typed{}, err
	}
	if needle.typ != sqlgen.TypeString {
		return typed{}, fmt.Errorf("query: $contains substr must be a string: %w", storage.ErrInvalidArgument)
	}
	if hay.typ != sqlgen.TypeString {
		c.b.args = c.b.args[:mark]
		return typed{sqlNull, sqlgen.TypeBool}, nil
	}
	if token {
		return typed{c.b.d.HasToken(hay.sql, needle.sql, ci), sqlgen.TypeBool}, nil
	}
	return typed{c.b.d.Contains(hay.sql, needle.sql, ci), sqlgen.TypeBool}, nil
}
