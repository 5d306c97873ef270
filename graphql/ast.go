package graphql

// Document is a parsed GraphQL request document: its operations and
// fragments. Type system definitions are refused by the parser.
type Document struct {
	Operations []*Operation
	Fragments  map[string]*Fragment
}

// Operation is a query or mutation.
type Operation struct {
	Kind      string // "query" or "mutation"
	Name      string // "" when anonymous
	Variables []VariableDef
	Selection []Selection
	Line, Col int
}

// VariableDef declares one $variable of an operation.
type VariableDef struct {
	Name     string
	Type     string // as written, e.g. "String!" or "[ID]"
	NonNull  bool   // the outer type ends with "!"
	Default  Value  // nil when none
	HasValue bool   // Default was written (it may be the null literal)
}

// Fragment is a named fragment definition.
type Fragment struct {
	Name, On  string
	Selection []Selection
}

// Selection is a field, a fragment spread or an inline fragment: exactly
// one of Field, Spread and Inline is set.
type Selection struct {
	Field  *Field
	Spread string    // the fragment's name
	Inline *Fragment // On is "" when the fragment has no type condition
	// Directives are @skip and @include (others are refused).
	Directives []Directive
}

// Field selects one field, possibly under an alias.
type Field struct {
	Alias, Name string
	Arguments   []Argument
	Selection   []Selection
	Line, Col   int
}

// ResponseKey is the key the field's value has in the answer.
func (f *Field) ResponseKey() string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

// Argument is name: value.
type Argument struct {
	Name  string
	Value Value
}

// Directive is @name(arguments).
type Directive struct {
	Name      string
	Arguments []Argument
}

// Value is an input value: one of the concrete types below.
type Value interface{ isValue() }

// Variable is $name.
type Variable struct{ Name string }

// Scalar is a literal int, float, string, boolean or enum value, kept as
// its Go value: int64, float64, string, bool, or EnumValue.
type Scalar struct{ V any }

// EnumValue is an enum literal (a name that is not true, false or null).
type EnumValue string

// Null is the null literal.
type Null struct{}

// List is [values].
type List []Value

// Object is {name: value} with its fields in document order.
type Object []Argument

func (Variable) isValue() {}
func (Scalar) isValue()   {}
func (Null) isValue()     {}
func (List) isValue()     {}
func (Object) isValue()   {}
