package tracemetricsprocessor

import (
	"encoding/json"
	"testing"

	"github.com/weftdev/weft/pricing"
)

// TestScanUsageAgreesWithPricing checks the in-place scanner against the
// decoding the cost API uses (pricing.Usage, pricing.LLMIDs,
// pricing.Tokens), so metrics and costs count the same tokens.
func TestScanUsageAgreesWithPricing(t *testing.T) {
	summaries := []string{
		`{}`,
		`{"usage": null}`,
		`{"usage": 3}`,
		`{"usage": {}}`,
		`{"weave": {"status": "success"}, "usage": {"gpt-4o": {"prompt_tokens": 10, "completion_tokens": 5, "requests": 1, "total_tokens": 15}}}`,
		`{"usage": {"claude": {"input_tokens": 7, "output_tokens": 2, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 1}}}`,
		`{"usage": {"m": {"prompt_tokens": 4, "input_tokens": 6, "completion_tokens": 1, "output_tokens": 2}}}`,
		`{"usage": {"m": {"prompt_tokens": "12", "completion_tokens": null, "requests": true, "total_tokens": 2.9}}}`,
		`{"usage": {"m": {"prompt_tokens": 1e3, "completion_tokens": -4, "total_tokens": 9007199254740993}}}`,
		`{"USAGE": {"m": {"Prompt_Tokens": 5, "COMPLETION_TOKENS": 6}}}`,
		`{"usage": {"a": {"prompt_tokens": 1}}, "usage": {"b": {"prompt_tokens": 2}}}`,
		`{"usage": {"a": {"prompt_tokens": 1}, "a": {"prompt_tokens": 9}}}`,
		`{"usage": {"a": {"prompt_tokens": 1, "prompt_tokens": 4}}}`,
		`{"usage": {"a": "text", "b": [1, 2], "c": {"prompt_tokens": 2}}}`,
		`{"usage": {"we\"ird/m\u00e9": {"prompt_tokens": 8}, "p\u0072ompt": {"\u0070rompt_tokens": 3}}}`,
		`{"nested": {"usage": {"x": {"prompt_tokens": 99}}}, "list": [{"usage": 1}, "}{"], "usage": {"y": {"completion_tokens": 3, "extra": {"prompt_tokens": 50}}}}`,
		` { "usage" : { "s" : { "prompt_tokens" : 1 , "completion_tokens" : 2 } } } `,
	}
	for _, summary := range summaries {
		t.Run(summary, func(t *testing.T) {
			want := map[string]pricing.Tokens{}
			u := pricing.Usage(json.RawMessage(summary))
			var models map[string]json.RawMessage
			_ = json.Unmarshal(u, &models)
			for _, id := range pricing.LLMIDs(u) {
				var tk pricing.Tokens
				if tk.Parse(models[id]) {
					want[id] = tk
				}
			}
			got := map[string]pricing.Tokens{}
			for _, m := range scanUsage(nil, []byte(summary)) {
				if _, dup := got[string(m.model)]; dup {
					t.Fatalf("model %q reported twice", m.model)
				}
				got[string(m.model)] = m.tokens
			}
			if len(got) != len(want) {
				t.Fatalf("models: got %v, want %v", got, want)
			}
			for id, w := range want {
				if got[id] != w {
					t.Errorf("%q: got %+v, want %+v", id, got[id], w)
				}
			}
		})
	}
}

func TestScanUsageMalformedDoesNotPanic(t *testing.T) {
	for _, s := range []string{``, `{`, `{"usage"`, `{"usage": {"m": {"prompt_tokens": 1`, `{"usage": {"m"`, `{"usage":{"m":{"a":"\`, `[]`, `"x"`} {
		_ = scanUsage(nil, []byte(s))
	}
}

func TestOpLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"weave:///acme/proj/op/summarize:abc123", "summarize"},
		{"weave:///acme/proj/op/Agent.run:0123", "Agent.run"},
		{"weave:///acme/proj/op/noversion", "noversion"},
		{"weave:///acme/proj/object/x:1", "weave:///acme/proj/object/x:1"},
		{"openai.chat.completions.create", "openai.chat.completions.create"},
		{"", "unknown"},
	} {
		if got := opLabel(tc.in); got != tc.want {
			t.Errorf("opLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
