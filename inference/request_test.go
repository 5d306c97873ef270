package inference

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestUpstreamBody: the model is the upstream's, streams always ask for
// usage (keeping the client's other stream options), and every other
// member, whatever its name, goes up unchanged.
func TestUpstreamBody(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"plain", `{"model":"m","messages":[{"role":"user","content":"x"}],"top_k":3}`,
			`{"messages":[{"role":"user","content":"x"}],"model":"up","top_k":3}`},
		{"stream without options", `{"model":"m","messages":[{"role":"user"}],"stream":true}`,
			`{"messages":[{"role":"user"}],"model":"up","stream":true,"stream_options":{"include_usage":true}}`},
		{"stream keeps other options", `{"model":"m","messages":[{"role":"user"}],"stream":true,"stream_options":{"include_usage":false,"continuous_usage_stats":true}}`,
			`{"messages":[{"role":"user"}],"model":"up","stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true}}`},
		{"stream_options null", `{"model":"m","messages":[{"role":"user"}],"stream":true,"stream_options":null}`,
			`{"messages":[{"role":"user"}],"model":"up","stream":true,"stream_options":{"include_usage":true}}`},
		{"names that need escaping", `{"model":"m","messages":[{"role":"user"}],"a\"b":1,"\u00e9t\u00e9":2,"<x>":3,"tab\t":4}`,
			`{"\u003cx\u003e":3,"a\"b":1,"messages":[{"role":"user"}],"model":"up","tab\t":4,"été":2}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fields, e := decodeObject([]byte(tc.body))
			if e != nil {
				t.Fatal(e)
			}
			req, e := parseChatRequest(fields)
			if e != nil {
				t.Fatal(e)
			}
			var got, want any
			body := req.upstreamBody("up")
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("upstream body %s is not JSON: %v", body, err)
			}
			_ = json.Unmarshal([]byte(tc.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("upstream body %s\nwant          %s", body, tc.want)
			}
		})
	}
}
