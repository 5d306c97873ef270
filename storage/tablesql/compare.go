package tablesql

import (
	"math"
	"time"

	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/wire"
)

func (c *compiler) compare(n *querylang.Compare) (typed, error) {
	if v, ok := c.compareTime(n); ok {
		return v, nil
	}
	mark := len(c.b.args)
	l, err := c.value(n.Left, castOf(n.Right))
	if err != nil {
		return typed{}, err
	}
	r, err := c.value(n.Right, castOf(n.Left))
	if err != nil {
		return typed{}, err
	}
	if l.typ == typeNull || r.typ == typeNull {
		return compareNull(n.Op, l, r), nil
	}
	if !comparable(l.typ, r.typ) {
		c.b.args = c.b.args[:mark] // nothing stays bound for a dropped expression
		return typed{sqlNull, sqlgen.TypeBool}, nil
	}
	return typed{"(" + l.sql + " " + sqlgen.CompareOperator(n.Op) + " " + r.sql + ")", sqlgen.TypeBool}, nil
}

func castOf(e querylang.Expr) querylang.CastType {
	c, _ := querylang.InferCast(e)
	return c
}

// compareNull: $eq with null is an IS NULL test, any other comparison NULL.
func compareNull(op querylang.CompareOp, l, r typed) typed {
	switch {
	case op != querylang.OpEq:
		return typed{sqlNull, sqlgen.TypeBool}
	case l.typ == typeNull && r.typ == typeNull:
		return typed{"TRUE", sqlgen.TypeBool}
	case l.typ == typeNull:
		l = r
	}
	return typed{"(" + l.sql + " IS NULL)", sqlgen.TypeBool}
}

// compareTime handles a datetime column compared with a non-null literal:
// numbers are unix seconds, strings ISO-8601; any other literal, or text
// that is no datetime, never matches.
func (c *compiler) compareTime(n *querylang.Compare) (typed, bool) {
	col, lit, colLeft := c.timeOperands(n.Left, n.Right)
	if col == "" {
		return typed{}, false
	}
	t, ok := timeValue(lit.Value)
	if !ok {
		return typed{sqlNull, sqlgen.TypeBool}, true
	}
	l, r := col, c.b.bind(t, sqlgen.TypeTime)
	if !colLeft {
		l, r = r, l
	}
	return typed{"(" + l + " " + sqlgen.CompareOperator(n.Op) + " " + r + ")", sqlgen.TypeBool}, true
}

// timeOperands finds a datetime column and a non-null literal among a and
// b; col is "" when there are none.
func (c *compiler) timeOperands(a, b querylang.Expr) (col string, lit *querylang.Literal, colLeft bool) {
	for i, pair := range [][2]querylang.Expr{{a, b}, {b, a}} {
		g, gok := pair[0].(*querylang.GetField)
		l, lok := pair[1].(*querylang.Literal)
		if !gok || !lok || l.Value == nil {
			continue
		}
		if column, ok := c.t.column(g.Path); ok && column.Kind == Time {
			return column.Name, l, i == 0
		}
	}
	return "", nil, false
}

func timeValue(v any) (time.Time, bool) {
	switch x := v.(type) {
	case int64:
		return unixTime(float64(x))
	case float64:
		return unixTime(x)
	case string:
		t, err := wire.ParseTime(x)
		return t, err == nil
	}
	return time.Time{}, false
}

func unixTime(sec float64) (time.Time, bool) {
	if math.IsNaN(sec) || math.Abs(sec) > 1e11 {
		return time.Time{}, false
	}
	whole := math.Floor(sec)
	return time.Unix(int64(whole), int64(math.Round((sec-whole)*1e6))*1000).UTC(), true
}

// comparable: numbers with numbers, strings with strings, times with times.
func comparable(a, b sqlgen.Type) bool {
	num := func(t sqlgen.Type) bool { return t == sqlgen.TypeInt || t == sqlgen.TypeFloat }
	return (num(a) && num(b)) || (a == b && a != typeNull)
}
