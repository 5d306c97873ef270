package chatstream

import (
	"encoding/json"
	"strings"
	"testing"
)

// assemble parses and adds each payload, failing on a parse error.
func assemble(t *testing.T, max int, payloads ...string) *Assembler {
	t.Helper()
	a := NewAssembler(max)
	for _, p := range payloads {
		c, err := Parse([]byte(p))
		if err != nil {
			t.Fatalf("Parse(%s): %v", p, err)
		}
		a.Add(c)
	}
	return a
}

func TestAssemble(t *testing.T) {
	const head = `"id":"c1","object":"chat.completion.chunk","created":7,"model":"m"`
	tests := []struct {
		name     string
		payloads []string
		want     string
	}{
		{"content", []string{
			`{` + head + `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
			`{` + head + `,"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
			`{` + head + `,"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}],"usage":null}`,
			`{` + head + `,"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
		}, `{"id":"c1","object":"chat.completion","created":7,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`},
		{"tool call fragments", []string{
			`{` + head + `,"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
			`{` + head + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
			`{` + head + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}`,
		}, `{"id":"c1","object":"chat.completion","created":7,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}`},
		{"reasoning both spellings", []string{
			`{` + head + `,"choices":[{"index":0,"delta":{"reasoning":"think","reasoning_content":"old"}}]}`,
			`{` + head + `,"choices":[{"index":0,"delta":{"reasoning":"ing","content":"42"},"finish_reason":"stop"}]}`,
		}, `{"id":"c1","object":"chat.completion","created":7,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"42","reasoning":"thinking","reasoning_content":"old"},"finish_reason":"stop"}]}`},
		{"two choices out of order", []string{
			`{` + head + `,"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}}]}`,
		}, `{"id":"c1","object":"chat.completion","created":7,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":null},{"index":1,"message":{"role":"assistant","content":"b"},"finish_reason":null}]}`},
		{"no chunks", nil, `{"id":"","object":"chat.completion","created":0,"model":"","choices":[]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(assemble(t, 1<<20, tc.payloads...).Completion())
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestAssembleIsBounded(t *testing.T) {
	var payloads []string
	for range 100 {
		payloads = append(payloads, `{"choices":[{"index":0,"delta":{"content":"0123456789"}}]}`)
	}
	a := assemble(t, 200, payloads...)
	var out struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if err := json.Unmarshal(a.Completion(), &out); err != nil {
		t.Fatal(err)
	}
	if !a.Truncated() || len(out.Choices[0].Message.Content) > 200 || !strings.HasPrefix(out.Choices[0].Message.Content, "0123456789") {
		t.Fatalf("truncated %v, content %d bytes", a.Truncated(), len(out.Choices[0].Message.Content))
	}
}

func TestChunkClassification(t *testing.T) {
	tests := []struct {
		payload          string
		usageOnly        bool
		errMsg           string
		hasErr, hasUsage bool
	}{
		{`{"choices":[],"usage":{"total_tokens":1}}`, true, "", false, true},
		{`{"choices":[{"index":0,"delta":{}}],"usage":{"total_tokens":1}}`, false, "", false, true},
		{`{"choices":[{"index":0,"delta":{}}],"usage":null}`, false, "", false, false},
		{`{"choices":[],"usage":7}`, false, "", false, false},
		{`{"error":{"message":"boom","type":"server_error"}}`, false, "boom", true, false},
		{`{"error":"plain"}`, false, "plain", true, false},
		{`{"error":null,"choices":[]}`, false, "", false, false},
	}
	for _, tc := range tests {
		c, err := Parse([]byte(tc.payload))
		if err != nil {
			t.Fatal(err)
		}
		msg, hasErr := c.ErrorMessage()
		if c.UsageOnly() != tc.usageOnly || c.HasUsage() != tc.hasUsage || hasErr != tc.hasErr || msg != tc.errMsg {
			t.Errorf("%s: usageOnly %v hasUsage %v err %q %v", tc.payload, c.UsageOnly(), c.HasUsage(), msg, hasErr)
		}
	}
	for _, bad := range []string{"[DONE]", "[]", "", `"x"`, `{"choices":5}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
