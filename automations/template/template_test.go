package template

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// values is a lookup over fixed JSON values.
func values(m map[string]string) Lookup {
	return func(name string) (json.RawMessage, bool) {
		v, ok := m[name]
		return json.RawMessage(v), ok
	}
}

var sample = values(map[string]string{
	"event_type":                `"ADD_ARTIFACT_ALIAS"`,
	"quote":                     `"say \"hi\"\\ now"`,
	"html":                      `"</script><b>&"`,
	"newline":                   `"a\nb\tc\u0001"`,
	"artifact_metadata.epochs":  `12`,
	"artifact_metadata.config":  `{"lr": 0.1, "layers": [1, 2]}`,
	"artifact_metadata.my key":  `"spaced"`,
	"SECRET":                    `"s3cr\"et"`,
	"artifact_metadata.nothing": `null`,
})

func TestRender(t *testing.T) {
	tests := []struct {
		name, tmpl, want string
	}{
		{"inside a string", `{"t":"${event_type}"}`, `{"t":"ADD_ARTIFACT_ALIAS"}`},
		{"escaped quotes and backslashes", `{"q":"${quote}"}`, `{"q":"say \"hi\"\\ now"}`},
		{"no HTML escaping", `{"h":"${html}"}`, `{"h":"</script><b>&"}`},
		{"control characters", `{"n":"x${newline}y"}`, `{"n":"xa\nb\tc\u0001y"}`},
		{"number keeps its type outside a string", `{"e":${artifact_metadata.epochs}}`, `{"e":12}`},
		{"object outside a string", `{"c":${artifact_metadata.config}}`, `{"c":{"lr":0.1,"layers":[1,2]}}`},
		{"object inside a string is its JSON text", `{"c":"cfg=${artifact_metadata.config}"}`, `{"c":"cfg={\"lr\":0.1,\"layers\":[1,2]}"}`},
		{"string outside a string is quoted", `{"t":${event_type}}`, `{"t":"ADD_ARTIFACT_ALIAS"}`},
		{"metadata key with a space", `{"k":"${artifact_metadata.my key}"}`, `{"k":"spaced"}`},
		{"bare secret", `{"auth":"Bearer $SECRET"}`, `{"auth":"Bearer s3cr\"et"}`},
		{"braced secret", `{"auth":"${SECRET}!"}`, `{"auth":"s3cr\"et!"}`},
		{"dollar escape", `{"p":"$$5 and $$SECRET"}`, `{"p":"$5 and $SECRET"}`},
		{"lone dollars", `{"p":"$ 5$","q":"$1"}`, `{"p":"$ 5$","q":"$1"}`},
		{"escaped quote keeps the string open", `{"a":"x\"${event_type}"}`, `{"a":"x\"ADD_ARTIFACT_ALIAS"}`},
		{"backslash before a dollar is literal", `{"a":"\$SECRET"}`, `{"a":"\$SECRET"}`},
		{"variable as a key", `{"${event_type}":1}`, `{"ADD_ARTIFACT_ALIAS":1}`},
		{"null", `{"n":${artifact_metadata.nothing},"s":"${artifact_metadata.nothing}"}`, `{"n":null,"s":"null"}`},
		{"plain text", `event ${event_type}`, `event "ADD_ARTIFACT_ALIAS"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(tc.tmpl)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := tmpl.Render(sample, 0)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		tmpl   string
		offset int
		msg    string
	}{
		{`{"a":"${event_type`, 6, "not closed"},
		{`{"a":"${event_type"}`, 6, "quote"},
		{`{"a":"${}"}`, 6, "names no variable"},
		{`{"a":"${1abc}"}`, 6, "must start with a letter"},
		{`x ${a"b}`, 2, "quote"},
		{strings.Repeat("x", MaxBytes+1), MaxBytes, "limit"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.tmpl)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != tc.offset || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("Parse(%.40q) = %v; want a syntax error at %d mentioning %q", tc.tmpl, err, tc.offset, tc.msg)
		}
	}
}

func TestCheckNamesUnknownVariables(t *testing.T) {
	tmpl, err := Parse(`{"a":"${event_type}","b":"$TOKEN","c":"${nope}","d":"${event_type}","e":"$schema"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tmpl.Names(), []string{"event_type", "TOKEN", "nope", "schema"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names = %v, want %v", got, want)
	}
	known := func(n string) bool { return n == "event_type" || n == "TOKEN" }
	err = tmpl.Check(known)
	var ue *UnknownVariableError
	if !errors.As(err, &ue) || !reflect.DeepEqual(ue.Names, []string{"${nope}", "${schema}"}) {
		t.Fatalf("Check = %v; want unknown ${nope}, ${schema}", err)
	}
	if !strings.Contains(err.Error(), "$$") {
		t.Fatalf("the error should say how to write a literal $: %v", err)
	}
}

func TestRenderRefuses(t *testing.T) {
	tmpl, err := Parse(`{"a":"${event_type}","b":"${gone}"}`)
	if err != nil {
		t.Fatal(err)
	}
	var ue *UnknownVariableError
	if _, err := tmpl.Render(sample, 0); !errors.As(err, &ue) || ue.Names[0] != "${gone}" {
		t.Fatalf("render with a missing value = %v", err)
	}
	big, _ := Parse(`{"c":${artifact_metadata.config}}`)
	if _, err := big.Render(sample, 10); err == nil || !strings.Contains(err.Error(), "exceeds 10 bytes") {
		t.Fatalf("render above the cap = %v", err)
	}
	bad := func(string) (json.RawMessage, bool) { return json.RawMessage(`{not json`), true }
	if _, err := big.Render(bad, 0); err == nil {
		t.Fatal("a value that is not JSON rendered")
	}
}

// FuzzRender holds the promise: a template that parses and is valid JSON
// renders to valid JSON, whatever string the variables hold.
func FuzzRender(f *testing.F) {
	f.Add(`{"a":"${x}","b":${x},"c":"$X"}`, `he said "hi" \ </b>`)
	f.Add(`["${x}\"${x}", "\\${x}"]`, "\x00\xff\u2028")
	f.Add(`{"${x}": [${x}, "$$x"]}`, "")
	f.Add(`"${x"`, "x")
	f.Fuzz(func(t *testing.T, src, value string) {
		tmpl, err := Parse(src)
		if err != nil {
			return
		}
		lookup := func(string) (json.RawMessage, bool) { return String(value), true }
		out, err := tmpl.Render(lookup, 0)
		if err != nil {
			t.Fatalf("Render(%q): %v", src, err)
		}
		if json.Valid([]byte(src)) && !json.Valid(out) {
			t.Fatalf("valid template %q rendered to invalid JSON %q", src, out)
		}
	})
}
