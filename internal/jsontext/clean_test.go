package jsontext

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanSurrogates(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{`{"a":"\ud800"}`, `{"a":"\ufffd"}`},
		{`{"a":"\uDC00x"}`, `{"a":"\ufffdx"}`},
		{`{"\ud800":1}`, `{"\ufffd":1}`},
		{`"\ud83d\ude00"`, `"\ud83d\ude00"`},
		{`"\ud83d\ud83d\ude00"`, `"\ufffd\ud83d\ude00"`},
		{`"\ude00\ud83d"`, `"\ufffd\ufffd"`},
		{`"\\ud800"`, `"\\ud800"`},
		{`"\\\ud800"`, `"\\\ufffd"`},
		{`"\u00e9\ud800\n"`, `"\u00e9\ufffd\n"`},
		{`"\ud800`, `"\ufffd`},
		{`"\ud8`, `"\ud8`},
	}
	for _, tc := range tests {
		if got := string(CleanSurrogates([]byte(tc.in))); got != tc.want {
			t.Errorf("CleanSurrogates(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestCleanSurrogatesDoesNotCopyCleanText(t *testing.T) {
	in := []byte(`{"a":"\u00e9 \ud83d\ude00"}`)
	if out := CleanSurrogates(in); &out[0] != &in[0] {
		t.Fatal("clean input was copied")
	}
}

func TestSanitizeNamesTheField(t *testing.T) {
	tests := []struct {
		in   string
		path string
		key  bool
	}{
		{"{\"start\":{\"op_name\":\"a\xff\"}}", "start.op_name", false},
		{"{\"batch\":[{\"req\":{}},{\"req\":{\"start\":{\"inputs\":{\"q\":[1,\"\xc3\"]}}}}]}", "batch[1].req.start.inputs.q[1]", false},
		{"{\"costs\":{\"m\xff\":{}}}", "costs", true},
		{"{\"x\":1,\"y\xff\":2}", "", true},
		{"\xff", "", false},
		{"{\"a\":[{},[],\"ok\"],\"b\":\"\xe2\x82\"}", "b", false},
	}
	for _, tc := range tests {
		_, err := Sanitize([]byte(tc.in))
		var ue *InvalidUTF8Error
		if !errors.As(err, &ue) {
			t.Fatalf("Sanitize(%q) = %v, want an InvalidUTF8Error", tc.in, err)
		}
		if ue.Path != tc.path || ue.Key != tc.key {
			t.Errorf("Sanitize(%q): path %q key %v, want %q %v", tc.in, ue.Path, ue.Key, tc.path, tc.key)
		}
	}
}

func TestSanitizeKeepsValidBodies(t *testing.T) {
	in := []byte(`{"a":"\ud800","b":"é"}`)
	out, err := Sanitize(in)
	if err != nil || string(out) != `{"a":"\ufffd","b":"é"}` {
		t.Fatalf("Sanitize = %s, %v", out, err)
	}
}

// FuzzSanitize checks that what Sanitize accepts is valid UTF-8 without
// lone surrogates, and that it decodes as the input did.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{`{"a":"\ud800"}`, `["\ud83d\ude00","\\ud800"]`, "{\"a\xff\":1}", `"\uDBFF\uDFFF\uDC00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Sanitize(in)
		if err != nil {
			if utf8.Valid(in) {
				t.Fatalf("valid UTF-8 %q refused: %v", in, err)
			}
			return
		}
		if len(out) != len(in) || !utf8.Valid(out) {
			t.Fatalf("Sanitize(%q) = %q", in, out)
		}
		if hasLone(out) {
			t.Fatalf("Sanitize(%q) = %q still holds a lone surrogate", in, out)
		}
		var a, b any
		errA, errB := json.Unmarshal(in, &a), json.Unmarshal(out, &b)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("validity changed: %v vs %v", errA, errB)
		}
		if errA == nil {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatalf("meaning changed: %s vs %s", ja, jb)
			}
		}
	})
}

// hasLone is the slow reference: any escape in the surrogate range that is
// not part of a high-low pair.
func hasLone(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '\\' {
			continue
		}
		i++
		if i >= len(doc) || doc[i] != 'u' {
			continue
		}
		r, ok := hex4(doc, i+1)
		switch {
		case !ok || !isSurrogate(r):
		case isHigh(r) && isLowEscape(doc, i+5):
			i += 10
		default:
			return true
		}
	}
	return false
}

// BenchmarkSanitize measures the check every JSON request body gets, on a
// batch of calls whose text is escaped the way Python's json.dumps writes
// non-ASCII (\u00e9, emoji as surrogate pairs).
func BenchmarkSanitize(b *testing.B) {
	call := `{"mode":"start","req":{"start":{"project_id":"acme/p","op_name":"chat","started_at":"2025-01-01T00:00:00Z",` +
		`"inputs":{"messages":[{"role":"user","content":"caf\u00e9 \ud83d\ude00 ` + strings.Repeat("lorem ipsum ", 60) + `"}]}}}}`
	body := []byte(`{"batch":[` + strings.TrimSuffix(strings.Repeat(call+",", 1000), ",") + `]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Sanitize(body); err != nil {
			b.Fatal(err)
		}
	}
}
