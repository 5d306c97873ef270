package sqlgen

import (
	"github.com/weftdev/weft/storage/querylang"
)

func (c *tableCompiler) compare(n *querylang.Compare) (typed, error) {
	if v, ok := c.compareTime(n); ok {
		return v, nil
	}
	mark := len(c.b.args)
	l, err := c.value(n.Left, peerCast(n.Right))
	if err != nil {
		return typed{}, err
	}
	r, err := c.value(n.Right, peerCast(n.Left))
	if err != nil {
		return typed{}, err
	}
	if l.typ == typeNull || r.typ == typeNull {
		return compareTableNull(n.Op, l, r), nil
	}
	if !tableComparable(l.typ, r.typ) {
		c.b.args = c.b.args[:mark] // nothing stays bound for a dropped expression
		return typed{sqlNullBool, TypeBool}, nil
	}
	return typed{"(" + l.sql + " " + CompareOperator(n.Op) + " " + r.sql + ")", TypeBool}, nil
}

func peerCast(e querylang.Expr) querylang.CastType {
	c, _ := querylang.InferCast(e)
	return c
}

// compareNull: $eq with null is an IS NULL test, any other comparison NULL.
func compareTableNull(op querylang.CompareOp, l, r typed) typed {
	switch {
	case op != querylang.OpEq:
		return typed{sqlNullBool, TypeBool}
	case l.typ == typeNull && r.typ == typeNull:
		return typed{"TRUE", TypeBool}
	case l.typ == typeNull:
		l = r
	}
	return typed{"(" + l.sql + " IS NULL)", TypeBool}
}

// compareTime handles a datetime column compared with a non-null literal:
// numbers are unix seconds, strings ISO-8601; any other literal, or text
// that is no datetime, never matches.
func (c *tableCompiler) compareTime(n *querylang.Compare) (typed, bool) {
	col, lit, colLeft := c.timeOperands(n.Left, n.Right)
	if col == "" {
		return typed{}, false
	}
	t, ok := timeLiteral(lit.Value)
	if !ok {
		return typed{sqlNullBool, TypeBool}, true
	}
	l, r := col, c.b.bind(t, TypeTime)
	if !colLeft {
		l, r = r, l
	}
	return typed{"(" + l + " " + CompareOperator(n.Op) + " " + r + ")", TypeBool}, true
}

// timeOperands finds a datetime column and a non-null literal among a and
// b; col is "" when there are none.
func (c *tableCompiler) timeOperands(a, b querylang.Expr) (col string, lit *querylang.Literal, colLeft bool) {
	for i, pair := range [][2]querylang.Expr{{a, b}, {b, a}} {
		g, gok := pair[0].(*querylang.GetField)
		l, lok := pair[1].(*querylang.Literal)
		if !gok || !lok || l.Value == nil {
			continue
		}
		if column, ok := c.t.column(g.Path); ok && column.Kind == ColTime {
			return column.Name, l, i == 0
		}
	}
	return "", nil, false
}

// tableComparable: numbers with numbers, strings with strings, times with times.
func tableComparable(a, b Type) bool {
	num := func(t Type) bool { return t == TypeInt || t == TypeFloat }
	return (num(a) && num(b)) || (a == b && a != typeNull)
}
