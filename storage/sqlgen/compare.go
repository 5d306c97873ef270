package sqlgen

import (
	"strings"

	"github.com/weftdev/weft/storage/querylang"
)

// CompareOperator is the SQL operator of a querylang comparison, the same
// in every dialect.
func CompareOperator(op querylang.CompareOp) string {
	switch op {
	case querylang.OpGt:
		return ">"
	case querylang.OpGte:
		return ">="
	case querylang.OpLt:
		return "<"
	case querylang.OpLte:
		return "<="
	}
	return "="
}

func isNullLiteral(e querylang.Expr) bool {
	l, ok := e.(*querylang.Literal)
	return ok && l.Value == nil
}

// comparable reports whether values of two types ever compare equal:
// numbers (booleans count as 0/1) with numbers, strings with strings,
// times with times. Anything else never matches.
func comparable(a, b Type) bool {
	num := func(t Type) bool { return t == TypeInt || t == TypeFloat || t == TypeBool }
	return (num(a) && num(b)) || (a == b && (a == TypeString || a == TypeTime))
}

// alignNumbers turns booleans into 0/1 when they meet other numbers.
func alignNumbers(vals ...typed) []typed {
	mixed := false
	for _, v := range vals {
		mixed = mixed || v.typ == TypeInt || v.typ == TypeFloat
	}
	for i, v := range vals {
		if mixed && v.typ == TypeBool {
			vals[i] = typed{boolToInt(v.sql), TypeInt}
		}
	}
	return vals
}

func (c *compiler) compare(n *querylang.Compare) (typed, error) {
	if isNullLiteral(n.Left) || isNullLiteral(n.Right) {
		return c.compareNull(n)
	}
	if col, lit, ok := timeOperands(n.Left, n.Right); ok {
		return c.compareTime(n, col, lit)
	}
	lc, _ := querylang.InferCast(n.Right)
	rc, _ := querylang.InferCast(n.Left)
	if !comparable(typeOf(n.Left, lc), typeOf(n.Right, rc)) {
		return typed{sqlNullBool, TypeBool}, nil
	}
	l, err := c.operand(n.Left, lc)
	if err != nil {
		return typed{}, err
	}
	r, err := c.operand(n.Right, rc)
	if err != nil {
		return typed{}, err
	}
	v := alignNumbers(l, r)
	exact := "(" + v[0].sql + " " + CompareOperator(n.Op) + " " + v[1].sql + ")"
	if n.Op != querylang.OpEq {
		return typed{exact, TypeBool}, nil
	}
	hint := c.rawTextHint(n.Left, n.Right, false, false)
	if hint == "" {
		hint = c.rawTextHint(n.Right, n.Left, false, false)
	}
	return typed{withHint(hint, exact), TypeBool}, nil
}

// compareNull renders a comparison with null: $eq is an IS NULL test, every other
// comparison with null is NULL.
func (c *compiler) compareNull(n *querylang.Compare) (typed, error) {
	if n.Op != querylang.OpEq {
		return typed{sqlNullBool, TypeBool}, nil
	}
	other := n.Left
	if isNullLiteral(n.Left) {
		other = n.Right
	}
	if isNullLiteral(other) {
		return typed{"TRUE", TypeBool}, nil
	}
	v, err := c.value(other)
	return typed{"(" + v.sql + " IS NULL)", TypeBool}, err
}

// timeOperands finds a datetime column compared with a literal.
func timeOperands(a, b querylang.Expr) (*querylang.GetField, *querylang.Literal, bool) {
	if g, l, ok := timeColumnAndLiteral(a, b); ok {
		return g, l, true
	}
	return timeColumnAndLiteral(b, a)
}

func timeColumnAndLiteral(a, b querylang.Expr) (*querylang.GetField, *querylang.Literal, bool) {
	g, gok := a.(*querylang.GetField)
	l, lok := b.(*querylang.Literal)
	if !gok || !lok {
		return nil, nil, false
	}
	f, err := lookupField(g.Path)
	return g, l, err == nil && f.kind == fieldColumn && f.typ == TypeTime
}

// compareTime compares a datetime column with a literal read as unix
// seconds or an ISO-8601 string; any other literal never matches.
func (c *compiler) compareTime(n *querylang.Compare, col *querylang.GetField, lit *querylang.Literal) (typed, error) {
	t, ok := timeLiteral(lit.Value)
	if !ok {
		return typed{sqlNullBool, TypeBool}, nil
	}
	f, err := lookupField(col.Path)
	if err != nil {
		return typed{}, err
	}
	colSQL, litSQL := c.fs.value(f), c.b.bind(t, TypeTime)
	l, r := colSQL, litSQL
	if n.Left != querylang.Expr(col) {
		l, r = litSQL, colSQL
	}
	return typed{"(" + l + " " + CompareOperator(n.Op) + " " + r + ")", TypeBool}, nil
}

// in renders $in: the operand equals one of the list elements. Elements
// that can never match (null, another type) are dropped; with none left
// the result is false, or NULL for a NULL operand.
func (c *compiler) in(n *querylang.In) (typed, error) {
	cast, _ := querylang.SharedCast(n.List)
	lt := typeOf(n.Operand, cast)
	left, err := c.operand(n.Operand, cast)
	if err != nil {
		return typed{}, err
	}
	vals := []typed{left}
	for _, e := range n.List {
		v, ok, err := c.inElement(e, lt)
		if err != nil {
			return typed{}, err
		}
		if ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == 1 {
		return typed{"(CASE WHEN " + left.sql + " IS NULL THEN NULL ELSE FALSE END)", TypeBool}, nil
	}
	vals = alignNumbers(vals...)
	elems := make([]string, len(vals)-1)
	for i, v := range vals[1:] {
		elems[i] = v.sql
	}
	exact := "(" + vals[0].sql + " IN (" + strings.Join(elems, ", ") + "))"
	return typed{withHint(c.inHint(n), exact), TypeBool}, nil
}

func (c *compiler) inElement(e querylang.Expr, lt Type) (typed, bool, error) {
	if lit, ok := e.(*querylang.Literal); ok && lt == TypeTime {
		t, ok := timeLiteral(lit.Value)
		if !ok {
			return typed{}, false, nil
		}
		return typed{c.b.bind(t, TypeTime), TypeTime}, true, nil
	}
	if isNullLiteral(e) || !comparable(lt, typeOf(e, "")) {
		return typed{}, false, nil
	}
	v, err := c.value(e)
	return v, err == nil, err
}

// contains renders $contains and $containsToken; non-string operands never
// match, and neither do NULL ones.
func (c *compiler) contains(input, substr querylang.Expr, ci, token bool) (typed, error) {
	if typeOf(input, "") != TypeString || typeOf(substr, "") != TypeString {
		return typed{"FALSE", TypeBool}, nil
	}
	in, err := c.value(input)
	if err != nil {
		return typed{}, err
	}
	sub, err := c.value(substr)
	if err != nil {
		return typed{}, err
	}
	expr := c.d.Contains(in.sql, sub.sql, ci)
	if token {
		expr = c.d.HasToken(in.sql, sub.sql, ci)
	}
	exact := "coalesce(" + expr + ", FALSE)"
	return typed{withHint(c.rawTextHint(input, substr, true, ci), exact), TypeBool}, nil
}
