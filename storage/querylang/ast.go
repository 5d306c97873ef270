package querylang

// Expr is one node of a parsed query: an operation (a boolean-valued node
// such as *And or *Compare) or an operand (*Literal, *GetField, *Convert).
type Expr interface {
	expr()
}

// CompareOp names a binary comparison by its wire key.
type CompareOp string

// The comparison operators.
const (
	OpEq  CompareOp = "$eq"
	OpGt  CompareOp = "$gt"
	OpGte CompareOp = "$gte"
	OpLt  CompareOp = "$lt"
	OpLte CompareOp = "$lte"
)

// CastType is the target of a $convert, and of the cast a literal infers on
// a dynamic field it is compared with.
type CastType string

// The $convert targets.
const (
	CastDouble CastType = "double"
	CastString CastType = "string"
	CastInt    CastType = "int"
	CastBool   CastType = "bool"
	CastExists CastType = "exists"
)

// And is true when every operand is true ({"$and": [...]}, at least one).
type And struct{ Operands []Expr }

// Or is true when any operand is true ({"$or": [...]}, at least one).
type Or struct{ Operands []Expr }

// Not negates its operand ({"$not": [x]}).
type Not struct{ Operand Expr }

// Compare is $eq, $gt, $gte, $lt or $lte between two operands.
type Compare struct {
	Op          CompareOp
	Left, Right Expr
}

// In is true when Operand equals any element of List ({"$in": [a, [b...]]}).
type In struct {
	Operand Expr
	List    []Expr
}

// Contains is a substring test ({"$contains": {...}}).
type Contains struct {
	Input, Substr   Expr
	CaseInsensitive bool
}

// ContainsToken is a whole-token test ({"$containsToken": {...}}): tokens
// are the runs between non-alphanumeric characters.
type ContainsToken struct {
	Input, Substr   Expr
	CaseInsensitive bool
}

// GetField reads a field by dotted path ({"$getField": "inputs.a"}). Use
// SplitPath to split it.
type GetField struct{ Path string }

// Literal is a constant ({"$literal": v}). Value is nil, bool, int64,
// float64, string, []any or map[string]any, the containers holding values
// of those same types. JSON numbers without a fraction or exponent parse as
// int64, others as float64.
type Literal struct{ Value any }

// Convert casts its input ({"$convert": {"input": x, "to": "int"}}).
type Convert struct {
	Input Expr
	To    CastType
}

func (*And) expr()           {}
func (*Or) expr()            {}
func (*Not) expr()           {}
func (*Compare) expr()       {}
func (*In) expr()            {}
func (*Contains) expr()      {}
func (*ContainsToken) expr() {}
func (*GetField) expr()      {}
func (*Literal) expr()       {}
func (*Convert) expr()       {}

// IsOperation reports whether e is an operation (a boolean-valued node)
// rather than a literal, a field or a conversion.
func IsOperation(e Expr) bool {
	switch e.(type) {
	case *Literal, *GetField, *Convert:
		return false
	}
	return e != nil
}

// IsScalar reports whether a literal is a scalar (not an object or array).
func (l *Literal) IsScalar() bool {
	switch l.Value.(type) {
	case []any, map[string]any:
		return false
	}
	return true
}
