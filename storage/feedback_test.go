package storage

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDropUnsetFeedbackExtras(t *testing.T) {
	tests := []struct {
		name, row string
		kept      []string
		want      string
	}{
		{"defaults dropped, order kept", `{"id":"a","scorer_tags":[],"payload":{"x":1},"span_status_code":"UNSET","span_trace_id":"","scorer_ratings":{}}`,
			nil, `{"id":"a","payload":{"x":1}}`},
		{"set fields kept", `{"id":"a","scorer_tags":["x"],"span_status_code":"ERROR","scorer_trace_id":"t"}`,
			nil, `{"id":"a","scorer_tags":["x"],"span_status_code":"ERROR","scorer_trace_id":"t"}`},
		{"named defaults kept", `{"id":"a","scorer_tags":[],"span_agent_name":""}`,
			[]string{"scorer_tags"}, `{"id":"a","scorer_tags":[]}`},
		{"other empty fields kept", `{"id":"","creator":null,"payload":{}}`, nil, `{"id":"","creator":null,"payload":{}}`},
		{"UNSET is a default only for the status code", `{"span_agent_name":"UNSET"}`, nil, `{"span_agent_name":"UNSET"}`},
		{"escaped keys", `{"a\"b":1,"scorer_tags":null}`, nil, `{"a\"b":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DropUnsetFeedbackExtras(json.RawMessage(tc.row), tc.kept)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	for _, bad := range []string{`[]`, `{"a":`, `"x"`, ``} {
		if _, err := DropUnsetFeedbackExtras(json.RawMessage(bad), nil); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzDropUnsetFeedbackExtras: any object comes back as a valid object
// with no unset extra field and every other field as it was.
func FuzzDropUnsetFeedbackExtras(f *testing.F) {
	f.Add(`{"id":"a","scorer_tags":[],"span_status_code":"UNSET"}`)
	f.Add(`{"payload":{"scorer_tags":[]},"span_trace_id":"t"}`)
	f.Fuzz(func(t *testing.T, row string) {
		var in map[string]json.RawMessage
		if json.Unmarshal([]byte(row), &in) != nil || bytes.Count([]byte(row), []byte(`":`)) > 64 {
			return
		}
		out, err := DropUnsetFeedbackExtras(json.RawMessage(row), nil)
		if err != nil {
			t.Fatalf("%s: %v", row, err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s -> %s: %v", row, out, err)
		}
		for k, v := range in {
			g, ok := got[k]
			if drop := IsFeedbackExtra(k) && IsFeedbackExtraDefault(k, v); ok == drop || ok && !bytes.Equal(bytes.TrimSpace(g), bytes.TrimSpace(v)) {
				t.Fatalf("%s -> %s: field %q", row, out, k)
			}
		}
	})
}
