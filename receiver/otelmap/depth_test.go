package otelmap

import (
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/jsontext"
)

// JSON text attributes nested deeper than a stored value may be stay
// strings: embedded, they would give the call a value no SDK can read.
func TestEmbeddedJSONDeeperThanTheLimitStaysText(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name     string
		depth    int
		embedded bool
	}{
		{"at the limit", jsontext.MaxValueDepth, true},
		{"past the limit", jsontext.MaxValueDepth + 1, false},
		{"5000 levels", 5000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mapOK(t, Options{}, oneSpan(t, []kv{{"input.value", deep(tc.depth)}}, nil))
			text := strings.Contains(string(c.Inputs), `"`+deep(tc.depth)+`"`)
			if tc.embedded == text || jsontext.TooDeep(c.Inputs, jsontext.MaxValueDepth+3) {
				t.Fatalf("inputs %.80s…: embedded %v, want %v", c.Inputs, !text, tc.embedded)
			}
		})
	}
}
