package weavereceiver

import (
	"bytes"
	"strings"
	"testing"
)

// Invalid UTF-8 anywhere in a call write is a 422 naming the field (a body
// that is no JSON text, as the reference's request validation answers),
// and nothing reaches the pipeline.
func TestInvalidUTF8IsRefusedNamingTheField(t *testing.T) {
	bad := func(s string) string { return strings.Replace(s, "BAD", "\xff", 1) }
	withStart := func(field string) string {
		return bad(strings.Replace(start, `"op_name":"op"`, `"op_name":"op",`+field, 1))
	}
	tests := []struct{ name, path, body, field string }{
		{"op_name", "/call/start", bad(`{"start":` + strings.Replace(start, `"op_name":"op"`, `"op_name":"opBAD"`, 1) + `}`), "start.op_name"},
		{"inputs value", "/call/start", `{"start":` + withStart(`"inputs":{"q":"BAD"}`) + `}`, "start.inputs.q"},
		{"attributes key", "/call/start", `{"start":` + withStart(`"attributes":{"kBAD":1}`) + `}`, "start.attributes"},
		{"batch output", "/call/upsert_batch", bad(`{"batch":[{"mode":"end","req":{"end":` + strings.Replace(end, `"summary":{}`, `"summary":{},"output":["x","BAD"]`, 1) + `}}]}`), "batch[0].req.end.output[1]"},
		{"update display_name", "/call/update", bad(`{"project_id":"acme/p","call_id":"c1","display_name":"BAD"}`), "display_name"},
		{"delete ids", "/calls/delete", bad(`{"project_id":"acme/p","call_ids":["BAD"]}`), "call_ids[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			status, body := serve(t, rec, member, tc.path, tc.body)
			if status != 422 || !strings.Contains(body, `"reason":"`+tc.field+`: invalid UTF-8`) {
				t.Fatalf("status %d %s; want 422 naming %s", status, body, tc.field)
			}
			if len(rec.ops) != 0 {
				t.Fatalf("%d ops reached the pipeline", len(rec.ops))
			}
		})
	}
}

// Lone surrogate escapes become \ufffd in every JSON field of a call;
// valid pairs are kept.
func TestLoneSurrogatesBecomeReplacementCharacters(t *testing.T) {
	s := strings.Replace(start, `"op_name":"op"`, `"op_name":"op\ud800","inputs":{"q":"\ud800","e":"\ud83d\ude00"},"attributes":{"\udc00":1},"otel_dump":{"a":"\ud800"}`, 1)
	e := strings.Replace(end, `"summary":{}`, `"summary":{"s":"\udbff"},"output":"\ud800"`, 1)
	rec := &recorder{}
	body := `{"batch":[{"mode":"start","req":{"start":` + s + `}},{"mode":"end","req":{"end":` + e + `}}]}`
	if status, out := serve(t, rec, member, "/call/upsert_batch", body); status != 200 {
		t.Fatalf("status %d %s", status, out)
	}
	st, en := rec.ops[0].Part.Call, rec.ops[1].Part.Call
	if st.OpName != "op\ufffd" {
		t.Errorf("op_name = %q", st.OpName)
	}
	for name, doc := range map[string][]byte{"inputs": st.Inputs, "attributes": st.Attributes, "otel_dump": st.OtelDump, "summary": en.Summary, "output": en.Output} {
		if bytes.Contains(bytes.ToLower(doc), []byte(`\ud8`)) && !bytes.Contains(doc, []byte(`\ud83d\ude00`)) ||
			bytes.Contains(bytes.ToLower(doc), []byte(`\udc`)) || bytes.Contains(doc, []byte(`\udbff`)) {
			t.Errorf("%s keeps a lone surrogate: %s", name, doc)
		}
		if !bytes.Contains(doc, []byte(`\ufffd`)) {
			t.Errorf("%s = %s, want \\ufffd in place of the lone surrogate", name, doc)
		}
	}
	if !bytes.Contains(st.Inputs, []byte(`\ud83d\ude00`)) {
		t.Errorf("inputs = %s, want the valid pair kept", st.Inputs)
	}
}
