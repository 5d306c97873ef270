package duckdb

import (
	"strconv"
	"strings"
	"testing"
)

// asRead is what DuckDB.RawSpanText returns for a stored dump whose row
// holds inputs and output.
func asRead(stored, inputs, output string) string {
	if !strings.HasPrefix(stored, refPrefix) && !strings.HasPrefix(stored, embeddedOutputPrefix) {
		return stored
	}
	return stored + rowSep + strconv.Itoa(len(inputs)) + ":" + inputs + output
}

func TestDumpReferencesRoundTrip(t *testing.T) {
	msgs := `[{"role":"user","content":"` + strings.Repeat("tell me about otters ", 5) + `"}]`
	answer := `[{"role":"assistant","content":"` + strings.Repeat("otters hold hands ", 5) + `"}]`
	text := `"` + strings.Repeat("plain prompt text ", 4) + `"`
	for _, tc := range []struct {
		name, dump, inputs, output string
		withOutput                 bool
		wantRefs                   int // references in the stored form; 0: stored as it came
	}{
		{"genai messages", `{"attributes":{"gen_ai":{"input":{"messages":` + msgs + `},"output":{"messages":` + answer + `}}}}`,
			`{"gen_ai.input.messages":` + msgs + `}`, `{"gen_ai.output.messages":` + answer + `}`, true, 2},
		{"start side only: the output is not referenced", `{"a":` + msgs + `,"b":` + answer + `}`,
			`{"m":` + msgs + `}`, `{"m":` + answer + `}`, false, 1},
		{"string values and spaces", `{"prompt": ` + text + `, "n": 1}`, `{ "prompt" : ` + text + ` , "n":1 }`, `null`, true, 1},
		{"a value found twice is referenced once", `{"a":` + msgs + `,"b":` + msgs + `}`, `{"m":` + msgs + `}`, ``, false, 1},
		{"overlapping values keep the first", `{"a":` + msgs + `}`, `{"m":` + msgs + `,"n":"` + strings.Repeat("tell me about otters ", 5) + `"}`, ``, false, 1},
		{"short values are kept", `{"a":"short","b":1}`, `{"m":"short"}`, ``, false, 0},
		{"not in the dump", `{"a":1}`, `{"m":` + msgs + `}`, ``, true, 0},
		{"inputs not an object", `{"a":` + msgs + `}`, msgs, ``, false, 0},
		{"truncated inputs", `{"a":` + msgs + `}`, `{"m":` + msgs[:20], ``, false, 0},
		{"a dump holding the marker byte", "{\"a\":\"\x01\",\"b\":" + msgs + `}`, `{"m":` + msgs + `}`, ``, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sources := []refSource{{column: 'i', text: []byte(tc.inputs)}}
			if tc.withOutput {
				sources = append(sources, refSource{column: 'o', text: []byte(tc.output)})
			}
			packed := withRefs([]byte(tc.dump), sources...)
			if got := strings.Count(string(packed), string(refMark)) / 2; got != tc.wantRefs {
				t.Fatalf("%d references in %q, want %d", got, packed, tc.wantRefs)
			}
			if packed == nil {
				return
			}
			if len(packed) >= len(tc.dump) {
				t.Errorf("stored form %d bytes, the dump %d", len(packed), len(tc.dump))
			}
			got, err := restoreRefs(asRead(string(packed), tc.inputs, tc.output))
			if err != nil || string(got) != tc.dump {
				t.Fatalf("restored %q, %v; want %q", got, err, tc.dump)
			}
		})
	}
}

func TestDumpKeepsTheOutputItReferenced(t *testing.T) {
	answer := `"` + strings.Repeat("the first answer ", 4) + `"`
	dump := `{"out":` + answer + `}`
	inputs, output := `{}`, `{"text":`+answer+`}`
	packed := withRefs([]byte(dump), refSource{'i', []byte(inputs)}, refSource{'o', []byte(output)})
	// What keepOutputSQL stores when an end part replaces the output.
	kept := embeddedOutputPrefix + strconv.Itoa(len(output)) + ":" + output + string(packed)
	got, err := restoreRefs(asRead(kept, inputs, `{"text":"a later answer"}`))
	if err != nil || string(got) != dump {
		t.Fatalf("restored %q, %v; want %q", got, err, dump)
	}
}

func TestRestoreRefsRejectsMalformedValues(t *testing.T) {
	for _, read := range []string{
		"r:{}",                              // the row was not appended
		"r:\x01i0,5\x01\x03" + "2:{}",       // past the end of the inputs
		"r:\x01i3,1\x01\x03" + "2:{}",       // reversed range
		"r:\x01x0,1\x01\x03" + "2:{}",       // unknown column
		"r:\x01i0\x01\x03" + "2:{}",         // no range
		"r:\x01i0,1\x03" + "2:{}",           // unclosed
		"r:\x01\x01\x03" + "2:{}",           // empty
		"r:{}\x03" + "9:{}",                 // inputs shorter than their length
		"r:{}\x03" + "x:{}",                 // no length
		"o=9:{}r:{}\x03" + "2:{}",           // embedded output too short
		"o=2:{}{}\x03" + "2:{}",             // embedded output without the "r:" form
		"o=-1:r:{}\x03" + "2:{}",            // negative length
		"r:\x01o0,2\x01\x03" + "0:" + "{",   // past the end of the output
		"r:\x01i00000000000000000000,1\x01", // no row, huge number
	} {
		if got, err := restoreRefs(read); err == nil {
			t.Errorf("restoreRefs(%q) = %q, want an error", read, got)
		}
	}
}

func FuzzRestoreRefs(f *testing.F) {
	f.Add("r:\x01i0,2\x01\x03" + "2:{}")
	f.Add("o=2:{}r:\x01o0,2\x01\x03" + "0:")
	f.Add("r:{}")
	f.Fuzz(func(t *testing.T, read string) {
		got, err := restoreRefs(read)
		if err != nil && got != nil {
			t.Fatalf("restored %q along with %v", got, err)
		}
	})
}

func FuzzDumpReferencesRoundTrip(f *testing.F) {
	f.Add(`{"a":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24]}`, `{"x":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24]}`, `{}`)
	f.Add(`{"s":"`+strings.Repeat("ab", 40)+`"}`, `{}`, `{"s":"`+strings.Repeat("ab", 40)+`"}`)
	f.Fuzz(func(t *testing.T, dump, inputs, output string) {
		packed := withRefs([]byte(dump), refSource{'i', []byte(inputs)}, refSource{'o', []byte(output)})
		if packed == nil {
			return
		}
		got, err := restoreRefs(asRead(string(packed), inputs, output))
		if err != nil || string(got) != dump {
			t.Fatalf("restored %q, %v; want %q", got, err, dump)
		}
	})
}
