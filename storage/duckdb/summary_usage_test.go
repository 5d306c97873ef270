package duckdb

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestUsageOfSummary(t *testing.T) {
	for _, tc := range []struct {
		name, summary string
		want          summaryUsage
	}{
		{"no summary", ``, summaryUsage{}},
		{"no usage", `{"weave":{"a":1}}`, summaryUsage{}},
		{"usage null", `{"usage":null}`, summaryUsage{}},
		{"no models", `{"usage":{}}`, summaryUsage{}},
		{"one model", `{"usage":{"gpt-4o":{"requests":2,"prompt_tokens":10,"input_tokens":1,"completion_tokens":5,` +
			`"output_tokens":2,"total_tokens":18,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}`,
			summaryUsage{Models: 1, Model: "gpt-4o", Requests: 2, Prompt: 11, Completion: 7, Total: 18, CacheRead: 3, CacheCreate: 4}},
		{"fractions and nulls", `{"usage":{"m":{"prompt_tokens":2.5,"requests":null}}}`, summaryUsage{Models: 1, Model: "m", Prompt: 2.5}},
		{"escaped key", `{"us\u0061ge":{"m\u00e9":{"prompt_tokens":1}}}`, summaryUsage{Models: 1, Model: "mé", Prompt: 1}},
		{"two models", `{"usage":{"a":{},"b":{}}}`, summaryUsage{Models: 2}},
		{"count as text", `{"usage":{"m":{"prompt_tokens":"1"}}}`, summaryUsage{Models: -1}},
		{"count too large", `{"usage":{"m":{"prompt_tokens":9007199254740992}}}`, summaryUsage{Models: -1}},
		{"count out of range", `{"usage":{"m":{"prompt_tokens":1e400}}}`, summaryUsage{Models: -1}},
		{"entry null", `{"usage":{"m":null}}`, summaryUsage{Models: -1}},
		{"entry a list", `{"usage":{"m":[1]}}`, summaryUsage{Models: -1}},
		{"usage a list", `{"usage":[1]}`, summaryUsage{Models: -1}},
		{"not JSON", `{"usage":`, summaryUsage{Models: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := usageOfSummary(json.RawMessage(tc.summary)); got != tc.want {
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
		u := usageOfSummary(summary)
		// The scan must read every summary it takes as the decoder does.
		if b := bytes.TrimSpace(summary); len(b) > 0 && b[0] == '{' && json.Valid(summary) {
			if want := parseUsage(summary); u != want {
				t.Fatalf("%q: read %+v, decoded %+v", summary, u, want)
			}
		}
		if !u.Typed() {
			if u != (summaryUsage{Models: u.Models}) {
				t.Fatalf("untyped usage %+v holds counts", u)
			}
			return
		}
		for _, c := range []float64{u.Requests, u.Prompt, u.Completion, u.Total, u.CacheRead, u.CacheCreate} {
			if math.IsNaN(c) || math.Abs(c) >= 2*maxUsageCount {
				t.Fatalf("typed usage %+v holds a count out of range", u)
			}
		}
	})
}

// BenchmarkUsageOfSummary: an LLM span's summary, read for every call
// written.
func BenchmarkUsageOfSummary(b *testing.B) {
	summary := json.RawMessage(`{"usage":{"gpt-4o":{"input_tokens":1234,"output_tokens":567,"requests":1}}}`)
	for b.Loop() {
		if !usageOfSummary(summary).Typed() {
			b.Fatal("not typed")
		}
	}
}
