package inference

import (
	"encoding/json"
	"testing"
)

// FuzzChatRequest feeds arbitrary bodies through what the gateway does
// with a request before it goes upstream: it must refuse or accept without
// panicking, and what it sends upstream must be a JSON object naming the
// upstream's model.
func FuzzChatRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"user"}],"stream":true,"stream_options":null}`,
		`{"model":"m","messages":[{"role":"user"}],"stream":true,"stream_options":{"include_usage":false,"x":[1]}}`,
		`{"model":null,"messages":{},"stream":"yes"}`,
		`{"\u00e9":1,"a\"b":{"c":[]},"model":"m","messages":[{"role":""}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, stream := range []bool{false, true} {
			_, _, _ = weaveInputs(body, stream) // must not panic; refusals are checked elsewhere
		}
		fields, e := decodeObject(body)
		if e != nil {
			return
		}
		req, e := parseChatRequest(fields)
		if e != nil {
			if e.status != 400 || e.message == "" {
				t.Fatalf("refusal %+v", e)
			}
			return
		}
		var up map[string]json.RawMessage
		if err := json.Unmarshal(req.upstreamBody("up-model"), &up); err != nil {
			t.Fatalf("upstream body of %q is not a JSON object: %v", body, err)
		}
		if string(up["model"]) != `"up-model"` || len(up) < len(fields) {
			t.Fatalf("upstream body %v lost members of %q", up, body)
		}
	})
}
