package sqlgen

import (
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// tableCompiler renders a query expression over one table.
type tableCompiler struct {
	b *builder
	t Table
}

func (c *tableCompiler) predicate(e querylang.Expr) (string, error) {
	v, err := c.value(e, "")
	if err != nil {
		return "", err
	}
	switch v.typ {
	case TypeBool:
		return v.sql, nil
	case TypeInt, TypeFloat:
		return "(" + v.sql + " <> 0)", nil
	case TypeString:
		return "(" + v.sql + " <> '')", nil
	case TypeTime:
		return "(" + v.sql + " IS NOT NULL)", nil
	}
	return sqlNullBool, nil
}

// value compiles e; cast is the type a peer literal imposes on a JSON path.
func (c *tableCompiler) value(e querylang.Expr, cast querylang.CastType) (typed, error) {
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
		return c.field(n.Path, cast)
	case *querylang.Literal:
		return c.literal(n)
	case *querylang.Convert:
		return c.convert(n)
	}
	return typed{}, fmt.Errorf("query: unsupported node %T: %w", e, storage.ErrInvalidArgument)
}

func (c *tableCompiler) logical(ops []querylang.Expr, sep string) (typed, error) {
	return combine(ops, sep, c.predicate)
}

func (c *tableCompiler) field(path string, cast querylang.CastType) (typed, error) {
	if col, ok := c.t.column(path); ok {
		return typed{col.Name, columnSQLType(col.Kind)}, nil
	}
	col, segs, ok := tableJSONPath(c.t, path)
	if !ok {
		return typed{}, unknownTableField(c.t, path)
	}
	d := c.b.d
	v := d.JSONValue(col.Name, c.b.bind(d.JSONPath(segs), TypeString))
	return castTableText(d, v, cast), nil
}

func columnSQLType(k ColumnKind) Type {
	switch k {
	case ColTime:
		return TypeTime
	case ColFloat:
		return TypeFloat
	}
	return TypeString
}

// castText parses a text value to the cast type; unparseable text is NULL.
func castTableText(d Dialect, s string, cast querylang.CastType) typed {
	switch cast {
	case querylang.CastInt:
		return typed{d.ParseInt(s), TypeInt}
	case querylang.CastDouble:
		return typed{d.ParseFloat(s), TypeFloat}
	case querylang.CastBool:
		return typed{"(" + d.ParseBool(s) + " = 1)", TypeBool}
	}
	return typed{s, TypeString}
}

func (c *tableCompiler) literal(l *querylang.Literal) (typed, error) {
	switch l.Value.(type) {
	case nil:
		return typed{"NULL", typeNull}, nil
	case bool:
		return typed{c.b.bind(l.Value, TypeBool), TypeBool}, nil
	case int64:
		return typed{c.b.bind(l.Value, TypeInt), TypeInt}, nil
	case float64:
		return typed{c.b.bind(l.Value, TypeFloat), TypeFloat}, nil
	case string:
		return typed{c.b.bind(l.Value, TypeString), TypeString}, nil
	}
	return typed{}, fmt.Errorf("query: literals must be strings, numbers, booleans or null, not objects or arrays: %w", storage.ErrInvalidArgument)
}

func (c *tableCompiler) convert(n *querylang.Convert) (typed, error) {
	if n.To == querylang.CastExists {
		if g, ok := n.Input.(*querylang.GetField); ok {
			if col, segs, ok := tableJSONPath(c.t, g.Path); ok {
				path := c.b.bind(c.b.d.JSONPath(segs), TypeString)
				return typed{c.b.d.JSONExists(col.Name, path), TypeBool}, nil
			}
		}
		v, err := c.value(n.Input, "")
		return typed{"(" + v.sql + " IS NOT NULL)", TypeBool}, err
	}
	v, err := c.value(n.Input, "")
	if err != nil || v.typ == typeNull {
		return v, err
	}
	return castTableText(c.b.d, c.b.d.ToText(v.sql, v.typ), n.To), nil
}

func (c *tableCompiler) in(n *querylang.In) (typed, error) {
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
		if !tableComparable(op.typ, v.typ) {
			c.b.args = c.b.args[:mark]
			continue
		}
		elems = append(elems, v.sql)
	}
	if len(elems) == 0 {
		return typed{"FALSE", TypeBool}, nil
	}
	return typed{"(" + op.sql + " IN (" + strings.Join(elems, ", ") + "))", TypeBool}, nil
}

// element compiles one $in list item; items compared with a datetime
// column convert like a comparison's literal.
func (c *tableCompiler) element(op typed, e querylang.Expr) (typed, error) {
	if lit, ok := e.(*querylang.Literal); ok && op.typ == TypeTime && lit.Value != nil {
		if t, ok := timeLiteral(lit.Value); ok {
			return typed{c.b.bind(t, TypeTime), TypeTime}, nil
		}
		return typed{"NULL", typeNull}, nil
	}
	return c.value(e, "")
}

func (c *tableCompiler) contains(input, substr querylang.Expr, ci, token bool) (typed, error) {
	mark := len(c.b.args)
	hay, err := c.value(input, "")
	if err != nil {
		return typed{}, err
	}
	needle, err := c.value(substr, "")
	if err != nil {
		return typed{}, err
	}
	if needle.typ != TypeString {
		return typed{}, fmt.Errorf("query: $contains substr must be a string: %w", storage.ErrInvalidArgument)
	}
	if hay.typ != TypeString {
		c.b.args = c.b.args[:mark]
		return typed{sqlNullBool, TypeBool}, nil
	}
	if token {
		return typed{c.b.d.HasToken(hay.sql, needle.sql, ci), TypeBool}, nil
	}
	return typed{c.b.d.Contains(hay.sql, needle.sql, ci), TypeBool}, nil
}
