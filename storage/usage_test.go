package storage

import (
	"encoding/json"
	"math"
	"testing"
)

func TestUsageOfSummary(t *testing.T) {
	for _, tc := range []struct {
		name, summary string
		want          SummaryUsage
	}{
		{"no summary", ``, SummaryUsage{}},
		{"no usage", `{"weave":{"a":1}}`, SummaryUsage{}},
		{"usage null", `{"usage":null}`, SummaryUsage{}},
		{"no models", `{"usage":{}}`, SummaryUsage{}},
		{"one model", `{"usage":{"gpt-4o":{"requests":2,"prompt_tokens":10,"input_tokens":1,"completion_tokens":5,` +
			`"output_tokens":2,"total_tokens":18,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}`,
			SummaryUsage{Models: 1, Model: "gpt-4o", Requests: 2, Prompt: 11, Completion: 7, Total: 18, CacheRead: 3, CacheCreate: 4}},
		{"fractions and nulls", `{"usage":{"m":{"prompt_tokens":2.5,"requests":null}}}`, SummaryUsage{Models: 1, Model: "m", Prompt: 2.5}},
		{"escaped key", `{"us\u0061ge":{"m\u00e9":{"prompt_tokens":1}}}`, SummaryUsage{Models: 1, Model: "mé", Prompt: 1}},
		{"two models", `{"usage":{"a":{},"b":{}}}`, SummaryUsage{Models: 2}},
		{"count as text", `{"usage":{"m":{"prompt_tokens":"1"}}}`, SummaryUsage{Models: -1}},
		{"count too large", `{"usage":{"m":{"prompt_tokens":9007199254740992}}}`, SummaryUsage{Models: -1}},
		{"count out of range", `{"usage":{"m":{"prompt_tokens":1e400}}}`, SummaryUsage{Models: -1}},
		{"entry null", `{"usage":{"m":null}}`, SummaryUsage{Models: -1}},
		{"entry a list", `{"usage":{"m":[1]}}`, SummaryUsage{Models: -1}},
		{"usage a list", `{"usage":[1]}`, SummaryUsage{Models: -1}},
		{"not JSON", `{"usage":`, SummaryUsage{Models: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UsageOfSummary(json.RawMessage(tc.summary)); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func FuzzUsageOfSummary(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"usage":{"m":{"prompt_tokens":1,"total_tokens":2}}}`, `{"usage":{"a":{},"b":{}}}`,
		`{"usage":{"m":{"prompt_tokens":"1"}}}`, `{"usage":[1]}`, `{"us\u0061ge":{"m":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, summary []byte) {
		u := UsageOfSummary(summary)
		if !u.Typed() {
			if u != (SummaryUsage{Models: u.Models}) {
				t.Fatalf("untyped usage %+v holds counts", u)
			}
			return
		}
		if !json.Valid(summary) {
			t.Fatalf("typed usage %+v from invalid JSON %q", u, summary)
		}
		for _, c := range []float64{u.Requests, u.Prompt, u.Completion, u.Total, u.CacheRead, u.CacheCreate} {
			if math.IsNaN(c) || math.Abs(c) >= 2*maxUsageCount {
				t.Fatalf("typed usage %+v holds a count out of range", u)
			}
		}
	})
}
