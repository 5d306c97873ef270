package inference

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestSummary: usage is keyed by the catalog model id, with one request
// and cached prompt tokens under the names costs read, whatever the
// upstream's usage already holds.
func TestSummary(t *testing.T) {
	tests := []struct {
		name, model, usage, want string
	}{
		{"no usage", "m", ``, `{}`},
		{"plain", "m", `{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}`,
			`{"usage":{"m":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"requests":1}}}`},
		{"cached prompt tokens", "m", `{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":4}}`,
			`{"usage":{"m":{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":4},"requests":1,"cache_read_input_tokens":4}}}`},
		{"no cached tokens", "m", `{"prompt_tokens_details":{"cached_tokens":0}}`,
			`{"usage":{"m":{"prompt_tokens_details":{"cached_tokens":0},"requests":1}}}`},
		{"empty", "m", `{ }`, `{"usage":{"m":{"requests":1}}}`},
		{"spaced", "m", " {\n \"total_tokens\" : 5 }\n", `{"usage":{"m":{"total_tokens":5,"requests":1}}}`},
		{"the upstream's own counts lose", "m", `{"requests":7,"cache_read_input_tokens":1,"prompt_tokens_details":{"cached_tokens":2}}`,
			`{"usage":{"m":{"requests":1,"cache_read_input_tokens":2,"prompt_tokens_details":{"cached_tokens":2}}}}`},
		{"escaped names", "m", `{"requ\u0065sts":7,"t\u00f6kens":1}`, `{"usage":{"m":{"requests":1,"tökens":1}}}`},
		{"model id with quotes and slashes", `org/a"<b>`, `{"total_tokens":1}`,
			`{"usage":{"org/a\"<b>":{"total_tokens":1,"requests":1}}}`},
		{"not JSON", "m", `{"total_tokens":`, `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := &exchange{modelID: tc.model, usage: json.RawMessage(tc.usage)}
			got := ex.summary()
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("summary %s is not JSON: %v", got, err)
			}
			_ = json.Unmarshal([]byte(tc.want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("summary %s\nwant    %s", got, tc.want)
			}
		})
	}
}
