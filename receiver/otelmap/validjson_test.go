package otelmap

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidJSON(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"a":[1,-2.5e+3,true,false,null,"x\"\u00e9\n"]}`, true},
		{` [ ] `, true},
		{`{}`, true},
		{`"é"`, true},
		{`0`, true},
		{`-0.1E-2`, true},
		{``, false},
		{`{"a":1,}`, false},
		{`[1,]`, false},
		{`01`, false},
		{`1.`, false},
		{`.5`, false},
		{`{"a" 1}`, false},
		{`{a:1}`, false},
		{`"\x"`, false},
		{`"\u12g4"`, false},
		{"\"a\x01\"", false},
		{"\"\xff\"", false},
		{`[1] [2]`, false},
		{`tru`, false},
		{strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth), true},
		{strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1), false},
	}
	for _, tc := range tests {
		if got := validJSON(tc.in); got != tc.want {
			t.Errorf("validJSON(%.40q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzValidJSON checks the fast validator against encoding/json.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `[1e5,-0.0,"\u00e9"]`, `"\ud800"`, "\"\xff\"", `{"a":1,}`, ` 7 `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := json.Valid([]byte(s)) && utf8.ValidString(s)
		if got := validJSON(s); got != want {
			t.Fatalf("validJSON(%.200q) = %v, encoding/json says %v", s, got, want)
		}
	})
}
