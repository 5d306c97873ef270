package querylang

// Walk visits e and its descendants depth-first, parents before children,
// operands in order. When visit returns false the node's children are
// skipped. A nil e is not visited.
func Walk(e Expr, visit func(Expr) bool) {
	if e == nil || !visit(e) {
		return
	}
	for _, child := range children(e) {
		Walk(child, visit)
	}
}

func children(e Expr) []Expr {
	switch n := e.(type) {
	case *And:
		return n.Operands
	case *Or:
		return n.Operands
	case *Not:
		return []Expr{n.Operand}
	case *Compare:
		return []Expr{n.Left, n.Right}
	case *In:
		return append([]Expr{n.Operand}, n.List...)
	case *Contains:
		return []Expr{n.Input, n.Substr}
	case *ContainsToken:
		return []Expr{n.Input, n.Substr}
	case *Convert:
		return []Expr{n.Input}
	}
	return nil
}

// Fields lists the distinct $getField paths of e in order of appearance.
func Fields(e Expr) []string {
	var out []string
	seen := map[string]bool{}
	Walk(e, func(n Expr) bool {
		if f, ok := n.(*GetField); ok && !seen[f.Path] {
			seen[f.Path] = true
			out = append(out, f.Path)
		}
		return true
	})
	return out
}

// InferCast returns the cast a literal operand imposes on a dynamic field
// it is compared with: bool, int or double for those literals; false for
// anything else (strings, null, containers, non-literals keep the field a
// string).
func InferCast(e Expr) (CastType, bool) {
	lit, ok := e.(*Literal)
	if !ok {
		return "", false
	}
	switch lit.Value.(type) {
	case bool:
		return CastBool, true
	case int64:
		return CastInt, true
	case float64:
		return CastDouble, true
	}
	return "", false
}

// SharedCast returns the cast a homogeneous $in list imposes: every element
// must infer the same cast, except that int and double mix to double. An
// empty list or any other mix infers nothing.
func SharedCast(list []Expr) (CastType, bool) {
	var shared CastType
	for _, e := range list {
		c, ok := InferCast(e)
		if !ok {
			return "", false
		}
		switch {
		case shared == "" || shared == c:
			shared = c
		case (shared == CastInt && c == CastDouble) || (shared == CastDouble && c == CastInt):
			shared = CastDouble
		default:
			return "", false
		}
	}
	return shared, shared != ""
}
