package sqlgen

import (
	"strconv"
	"strings"

	"github.com/weftdev/weft/storage/querylang"
)

// Raw-text prefilters: before parsing a JSON document to compare one of its
// values with a string literal, test whether the document text contains
// the literal at all. Substring search is far cheaper than JSON parsing and
// discards most rows. A prefilter is added only where it is a necessary
// condition of the exact test, so results never change:
//   - the literal holds only characters that JSON writes as themselves and
//     none of the structural characters ({ [ " : , \ /) whose spacing or
//     escaping differs between stored and minified JSON;
//   - a document with \u escapes always passes, since an escape may spell
//     any character;
//   - the literal cannot be the text of a number, whose stored form may
//     differ from the normalised one ("1e3" reads as "1000");
//   - the exact test is never NULL, so wrapping it in AND leaves NOT
//     unchanged.

// isPlainText reports whether every byte of s is an ASCII letter, digit or
// one of a few punctuation characters that JSON encoders write unescaped.
func isPlainText(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		alnum := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
		if !alnum && !strings.ContainsRune(" _-.@#$%()*!?;=~^|'+", rune(ch)) {
			return false
		}
	}
	return s != ""
}

// hasNonNumberChar reports whether s contains a character that never
// appears in the text of a number.
func hasNonNumberChar(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789.eE+-", r) })
}

// hintTarget returns the JSON column and the literal a prefilter for "the
// dynamic field e reads as lit" (or "contains lit" when substring) would
// test; ok is false when no safe prefilter exists.
func hintTarget(e, lit querylang.Expr, substring bool) (col, s string, ok bool) {
	g, gok := e.(*querylang.GetField)
	l, lok := lit.(*querylang.Literal)
	if !gok || !lok {
		return "", "", false
	}
	if s, ok = l.Value.(string); !ok || !isPlainText(s) {
		return "", "", false
	}
	if substring && !hasNonNumberChar(s) {
		return "", "", false
	}
	if _, err := strconv.ParseFloat(s, 64); !substring && err == nil {
		return "", "", false
	}
	f, err := lookupField(g.Path)
	if err != nil || f.kind != fieldJSON {
		return "", "", false
	}
	return f.name, s, true
}

// rawTextHint renders the prefilter of hintTarget, or "".
func (c *compiler) rawTextHint(e, lit querylang.Expr, substring, ci bool) string {
	col, s, ok := hintTarget(e, lit, substring)
	if !ok {
		return ""
	}
	raw := c.d.JSONText(c.fs.col(col))
	return "coalesce(" + c.d.Contains(raw, c.b.bind(s, TypeString), ci) + " OR " +
		c.d.Contains(raw, c.b.bind(`\u`, TypeString), false) + ", FALSE)"
}

// inHint is the prefilter of $in over a dynamic field: one of the
// elements' prefilters, when every element has one.
func (c *compiler) inHint(n *querylang.In) string {
	if len(n.List) == 0 {
		return ""
	}
	for _, e := range n.List {
		if _, _, ok := hintTarget(n.Operand, e, false); !ok {
			return ""
		}
	}
	hints := make([]string, len(n.List))
	for i, e := range n.List {
		hints[i] = c.rawTextHint(n.Operand, e, false, false)
	}
	return anyOf(hints)
}

// withHint prefixes an exact test with its prefilter, if any.
func withHint(hint, exact string) string {
	if hint == "" {
		return exact
	}
	return "(" + hint + " AND " + exact + ")"
}
