package jsontext

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
		{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), true},
		{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), false},
	}
	for _, tc := range tests {
		if got := Valid(tc.in); got != tc.want {
			t.Errorf("Valid(%.40q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzValid checks the fast validator against encoding/json.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `[1e5,-0.0,"\u00e9"]`, `"\ud800"`, "\"\xff\"", `{"a":1,}`, ` 7 `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := json.Valid([]byte(s)) && utf8.ValidString(s)
		if got := Valid(s); got != want {
			t.Fatalf("Valid(%.200q) = %v, encoding/json says %v", s, got, want)
		}
	})
}
