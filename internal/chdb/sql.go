package chdb

import (
	"fmt"
	"regexp"
	"strings"
)

// settingName limits setting names to what ClickHouse accepts, so a name can
// be written into a SET statement without quoting.
var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// setStatement renders settings as one SET statement. Values are always
// string literals: the engine parses numbers, booleans and sizes from strings,
// while a bare number would be rejected by a string-typed setting.
func setStatement(settings []Setting) (string, error) {
	var b strings.Builder
	b.WriteString("SET ")
	for i, s := range settings {
		if !settingName.MatchString(s.Name) {
			return "", &Error{Code: 115, Name: "UNKNOWN_SETTING",
				Message: fmt.Sprintf("Code: 115. DB::Exception: Setting name %q is not valid. (UNKNOWN_SETTING)", s.Name)}
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.Name)
		b.WriteString(" = ")
		b.WriteString(QuoteString(s.Value))
	}
	return b.String(), nil
}

// QuoteString renders s as a ClickHouse string literal.
func QuoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// QuoteIdentifier renders s as a back-quoted ClickHouse identifier.
func QuoteIdentifier(s string) string {
	return "`" + strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(s) + "`"
}
