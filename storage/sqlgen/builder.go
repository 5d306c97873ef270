package sqlgen

import (
	"strings"
	"unicode/utf8"
)

// Statement is a rendered query: SQL text with numbered placeholders and
// the arguments bound to them, in order.
type Statement struct {
	SQL  string
	Args []any
}

// builder collects bound arguments. Nothing is bound for an expression
// that is then dropped, so placeholders are always 1..len(args).
type builder struct {
	d    Dialect
	args []any
}

func newBuilder(d Dialect) *builder { return &builder{d: d} }

// bind binds v and returns its typed placeholder. Invalid UTF-8 in
// strings is replaced as a JSON decoder would, since engines refuse it.
func (b *builder) bind(v any, t Type) string {
	if s, ok := v.(string); ok && !utf8.ValidString(s) {
		v = strings.ToValidUTF8(s, "\uFFFD")
	}
	b.args = append(b.args, v)
	return b.d.Param(len(b.args), t)
}

// sqlList joins fragments for IN lists and select lists.
func sqlList(parts []string) string { return strings.Join(parts, ", ") }

// sqlNullBool is a boolean NULL in any SQL dialect.
const sqlNullBool = "(NULL = 1)"

// andAll joins predicates with AND; the empty conjunction is TRUE.
func andAll(preds []string) string {
	if len(preds) == 0 {
		return "TRUE"
	}
	return strings.Join(preds, " AND ")
}
