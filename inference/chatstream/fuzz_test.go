package chatstream

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAssemble parses arbitrary payloads (one per line) and folds those
// that parse: it must never panic, and the completion must always be a
// JSON object that stays near the bound.
func FuzzAssemble(f *testing.F) {
	f.Add([]byte(`{"id":"a","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}` + "\n" +
		`{"choices":[],"usage":{"total_tokens":2}}`))
	f.Add([]byte(`{"choices":[{"index":3,"delta":{"tool_calls":[{"index":9,"function":{"arguments":"{"}}]}}]}`))
	f.Add([]byte(`{"choices":[{"index":-1,"delta":{"reasoning":"x","refusal":""}}],"error":{"message":"m"}}`))
	const max = 512
	f.Fuzz(func(t *testing.T, in []byte) {
		a := NewAssembler(max)
		for line := range bytes.SplitSeq(in, []byte("\n")) {
			c, err := Parse(line)
			if err != nil {
				continue
			}
			c.ErrorMessage()
			a.Add(c)
		}
		out := a.Completion()
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("completion %q is not a JSON object: %v", out, err)
		}
		// Field names, indexes and JSON escaping come on top of the
		// bounded text: at most a few times the bound.
		if len(out) > 8*max+1024 {
			t.Fatalf("completion of %d bytes for a %d-byte bound", len(out), max)
		}
	})
}
