package monitors

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseMonitor(t *testing.T) {
	const scorer = "weave:///acme/app/object/judge:abc"
	tests := []struct {
		name, val string
		want      Monitor
		err       string
	}{
		{name: "sdk shape", val: `{"_class_name":"Monitor","sampling_rate":0.25,"scorers":["` + scorer + `"],"op_names":["chat","weave:///acme/app/op/qa:*"],"query":null,"active":true}`,
			want: Monitor{SamplingRate: 0.25, Scorers: []string{scorer}, Active: true,
				OpNames: []string{"chat", "weave:///acme/app/op/chat:*", "weave:///acme/app/op/qa:*"}}},
		{name: "default rate and older call_filter", val: `{"scorers":[],"call_filter":{"op_names":["x"],"query":{"$expr":{"$literal":true}}}}`,
			want: Monitor{SamplingRate: 1, Scorers: []string{}, OpNames: []string{"x", "weave:///acme/app/op/x:*"},
				Query: json.RawMessage(`{"$expr":{"$literal":true}}`)}},
		{name: "rate out of range", val: `{"sampling_rate":1.5,"scorers":[]}`, err: "sampling_rate 1.5 is outside [0, 1]"},
		{name: "negative cap", val: `{"scorers":[],"daily_spend_cap_usd":-1}`, err: "daily_spend_cap_usd -1 is negative"},
		{name: "scorer of another project", val: `{"scorers":["weave:///evil/p/object/judge:abc"]}`, err: "not an object ref of project acme/app"},
		{name: "not an object", val: `[1]`, err: "not a Monitor object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMonitor("acme/app", "m", "d1", json.RawMessage(tc.val))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.ProjectID, tc.want.Name, tc.want.Ref = "acme/app", "m", "weave:///acme/app/object/m:d1"
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseJudge(t *testing.T) {
	model := `{"_class_name":"LLMStructuredCompletionModel","llm_model_id":"judge","default_params":{"temperature":0,"max_tokens":50,
		"messages_template":[{"role":"system","content":"You grade {inputs.topic}."}],"response_format":"json",
		"response_format_schema":{"type":"object","required":["verdict"],"properties":{"verdict":{"type":"boolean"}}}}}`
	const ref = "weave:///acme/app/object/grader:d1"
	tests := []struct {
		name, val string
		models    map[string]string
		err       string
		check     func(t *testing.T, j Judge)
	}{
		{name: "inline model", val: `{"_class_name":"LLMAsAJudgeScorer","name":"grader","scoring_prompt":"Grade {output}","model":` + model + `}`,
			check: func(t *testing.T, j Judge) {
				if j.Model != "judge" || j.Prompt != "Grade {output}" || len(j.Messages) != 1 || j.Format != "json" || j.Schema == nil ||
					string(j.Params["max_tokens"]) != "50" {
					t.Fatalf("judge = %+v", j)
				}
			}},
		{name: "model by ref", val: `{"_class_name":"LLMAsAJudgeScorer","scoring_prompt":"Grade {output}","model":"weave:///acme/app/object/m:x"}`,
			models: map[string]string{"weave:///acme/app/object/m:x": model},
			check: func(t *testing.T, j Judge) {
				if j.Model != "judge" || j.Name != "grader" {
					t.Fatalf("judge = %+v, want its model read through the ref and its name from its ref", j)
				}
			}},
		{name: "a scorer that runs in the SDK", val: `{"_class_name":"ValidJSONScorer"}`, err: "only LLMAsAJudgeScorer scorers run on the server"},
		{name: "no model id", val: `{"_class_name":"LLMAsAJudgeScorer","scoring_prompt":"x","model":{"default_params":{}}}`, err: "no llm_model_id"},
		{name: "no prompt", val: `{"_class_name":"LLMAsAJudgeScorer","model":{"llm_model_id":"judge"}}`, err: "neither scoring_prompt nor a messages_template"},
		{name: "prompt ref", val: `{"_class_name":"LLMAsAJudgeScorer","scoring_prompt_ref":"weave:///a/b/object/p:1","model":{"llm_model_id":"judge"}}`, err: "scoring_prompt_ref"},
		{name: "bad format", val: `{"_class_name":"LLMAsAJudgeScorer","scoring_prompt":"x","model":{"llm_model_id":"judge","default_params":{"response_format":"xml"}}}`, err: `"xml" is not json or text`},
		{name: "missing model ref", val: `{"_class_name":"LLMAsAJudgeScorer","scoring_prompt":"x","model":"weave:///acme/app/object/gone:x"}`, err: "reading its model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := func(r string) (json.RawMessage, error) {
				if v, ok := tc.models[r]; ok {
					return json.RawMessage(v), nil
				}
				return nil, errors.New("not found")
			}
			j, err := ParseJudge(ref, json.RawMessage(tc.val), read)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, j)
		})
	}
}

func TestRender(t *testing.T) {
	inputs := json.RawMessage(`{"q":"why?","doc":{"title":"T","n":3}}`)
	tests := []struct{ template, want, err string }{
		{template: "Q: {q} / {inputs.q}; A: {output}", want: "Q: why? / why?; A: because"},
		{template: "{inputs.doc.title} has {doc.n} parts; all: {inputs}", want: `T has 3 parts; all: {"q":"why?","doc":{"title":"T","n":3}}`},
		{template: "literal {{braces}}", want: "literal {braces}"},
		{template: "{missing}", err: `names "missing", which the call does not have`},
		{template: "{q.x}", err: "not an object"},
		{template: "open {q", err: "unclosed {"},
	}
	for _, tc := range tests {
		got, err := render(tc.template, inputs, json.RawMessage(`"because"`))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("render(%q) err = %v, want %q", tc.template, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("render(%q) = %q, %v; want %q", tc.template, got, err, tc.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["verdict","reason"],"properties":{
		"verdict":{"type":"string","enum":["pass","fail"]},"reason":{"type":"string"},"score":{"type":"number","minimum":0,"maximum":1}}}`)
	tests := []struct {
		name, format, content, want, err string
		schema                           json.RawMessage
	}{
		{name: "label", format: "json", schema: schema, content: `{"verdict":"pass","reason":"fine","score":0.5}`, want: `{"verdict":"pass","reason":"fine","score":0.5}`},
		{name: "fenced", format: "json", schema: schema, content: "```json\n{\"verdict\":\"fail\",\"reason\":\"r\"}\n```", want: `{"verdict":"fail","reason":"r"}`},
		{name: "not a label", format: "json", schema: schema, content: `{"verdict":"maybe","reason":"r"}`, err: "not one of the schema's labels"},
		{name: "out of range", format: "json", schema: schema, content: `{"verdict":"pass","reason":"r","score":2}`, err: "outside the schema's range"},
		{name: "missing reason", format: "json", schema: schema, content: `{"verdict":"pass"}`, err: `has no "reason"`},
		{name: "not json", format: "json", content: `sure, it passes`, err: "unparseable verdict"},
		{name: "text", format: "text", content: ` it passes `, want: `"it passes"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := Judge{Model: "judge", Format: tc.format, Schema: tc.schema}
			var a answer
			content := tc.content
			a.Choices = append(a.Choices, struct {
				Message struct {
					Content *string `json:"content"`
				} `json:"message"`
			}{})
			a.Choices[0].Message.Content = &content
			got, err := j.verdict(a)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("verdict = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestSampledIsStableAndProportional(t *testing.T) {
	n := 0
	for i := range 10_000 {
		id := "call-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune(i))
		a, b := Sampled("m", id, 0.3), Sampled("m", id, 0.3)
		if a != b {
			t.Fatal("the same call was sampled differently")
		}
		if a {
			n++
		}
	}
	if n < 2800 || n > 3200 {
		t.Fatalf("a 0.3 sample of 10000 calls holds %d", n)
	}
	if Sampled("m", "x", 0) || !Sampled("m", "x", 1) {
		t.Fatal("rates 0 and 1 must take none and all")
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{"{q}", "{inputs.doc.title}", "{{x}}", "{", "}", "{output.a.b}", "{ q }"} {
		f.Add(s, `{"q":"x","doc":{"title":"t"}}`, `{"a":{"b":1}}`)
	}
	f.Fuzz(func(t *testing.T, template, inputs, output string) {
		// Any template and values: an answer or an error, never a panic.
		_, _ = render(template, json.RawMessage(inputs), json.RawMessage(output))
	})
}

func FuzzParseSpecs(f *testing.F) {
	f.Add(`{"sampling_rate":0.5,"scorers":["weave:///a/b/object/j:1"],"op_names":["x"],"active":true}`)
	f.Add(`{"_class_name":"LLMAsAJudgeScorer","scoring_prompt":"{output}","model":{"llm_model_id":"m","default_params":{"response_format_schema":{"type":"object"}}}}`)
	f.Fuzz(func(t *testing.T, val string) {
		_, _ = ParseMonitor("a/b", "m", "d", json.RawMessage(val))
		j, err := ParseJudge("weave:///a/b/object/j:1", json.RawMessage(val), nil)
		if err == nil {
			if _, err := j.request(storageCallFor(val)); err != nil {
				return
			}
		}
	})
}
