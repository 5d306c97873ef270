package protocol

import (
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	cases := []struct {
		line    string
		ok      bool
		typ     string
		wantErr string
	}{
		{"loading weights...", false, "", ""},
		{"", false, "", ""},
		{`{"type":"training_started","data":{"num_sequences":3}}`, true, LineStarted, ""},
		{`  {"type":"gradient_step","data":{"loss":0.5,"grad_norm":2}}  `, true, LineGradientStep, ""},
		{`{"type":"checkpoint","step":2,"dir":"step2","metrics":{"train/loss":0.1}}`, true, LineCheckpoint, ""},
		{`{"type":"failed","error_message":"OOM"}`, true, LineFailed, ""},
		{`{"type":"log","message":"hi","extra":1}`, true, LineLog, ""},
		{`{"type":"training_started","data":{}}`, true, "", "num_sequences"},
		{`{"type":"training_started","data":{"num_sequences":-1}}`, true, "", "num_sequences"},
		{`{"type":"gradient_step","data":{"loss":"low"}}`, true, "", "object of numbers"},
		{`{"type":"gradient_step"}`, true, "", "object of numbers"},
		{`{"type":"checkpoint","step":0,"dir":"x"}`, true, "", "step"},
		{`{"type":"checkpoint","step":1}`, true, "", "dir"},
		{`{"type":"done"}`, true, "", "not one of"},
		{`{"type":`, true, "", "not a JSON object"},
	}
	for _, tc := range cases {
		l, ok, err := ParseLine([]byte(tc.line))
		if ok != tc.ok {
			t.Errorf("%s: ok = %v, want %v", tc.line, ok, tc.ok)
		}
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.line, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: err = %v, want one naming %s", tc.line, err, tc.wantErr)
		case tc.wantErr == "" && l.Type != tc.typ:
			t.Errorf("%s: type %q, want %q", tc.line, l.Type, tc.typ)
		}
	}
}

// FuzzParseLine: any output line is plain output, a valid protocol line
// or an error; never a panic, and valid lines carry what their type needs.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{`{"type":"gradient_step","data":{"loss":1}}`, `{"type":"checkpoint","step":3,"dir":"d"}`,
		`{"type":"training_started","data":{"num_sequences":0}}`, "plain", `{"type":"failed"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		l, ok, err := ParseLine(raw)
		if !ok && err != nil {
			t.Fatalf("plain output with an error: %v", err)
		}
		if ok && err == nil && l.Type == LineCheckpoint && (l.Step < 1 || l.Dir == "") {
			t.Fatalf("accepted checkpoint without step or dir: %+v", l)
		}
	})
}
