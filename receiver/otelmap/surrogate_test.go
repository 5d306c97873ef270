package otelmap

import (
	"bytes"
	"testing"
)

// JSON text attributes are embedded as JSON; a lone surrogate escape in
// them must not reach the store, which could not read the document back.
func TestEmbeddedJSONLoneSurrogatesAreReplaced(t *testing.T) {
	c := mapOK(t, Options{}, oneSpan(t, []kv{
		{"input.value", `{"q":"\ud800","pair":"\ud83d\ude00"}`},
		{"output.value", `["\udc00"]`},
		{"custom", `{"k\ud800":1}`},
	}, nil))
	for name, doc := range map[string][]byte{"inputs": c.Inputs, "output": c.Output, "attributes": c.Attributes, "otel_dump": c.OtelDump} {
		if bytes.Contains(doc, []byte(`\ud800`)) || bytes.Contains(doc, []byte(`\udc00`)) {
			t.Errorf("%s keeps a lone surrogate: %s", name, doc)
		}
	}
	if !bytes.Contains(c.Inputs, []byte(`"q":"\ufffd","pair":"\ud83d\ude00"`)) {
		t.Errorf("inputs = %s, want q replaced and the pair kept", c.Inputs)
	}
	jsonEq(t, "output", c.Output, `{"output.value":["\ufffd"]}`)
}
