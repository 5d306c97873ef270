package otelmap

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// One case per convention: the call fields a span of that library maps to.
func TestConventions(t *testing.T) {
	tests := []struct {
		name       string
		attrs      []kv
		events     map[string][]kv
		inputs     string
		output     string // "" = no output
		summary    string
		attributes string
	}{{
		name: "otel genai current",
		attrs: []kv{
			{"gen_ai.operation.name", "chat"}, {"gen_ai.provider.name", "openai"},
			{"gen_ai.request.model", "gpt-4o"}, {"gen_ai.response.model", "gpt-4o-2024-08-06"},
			{"gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`},
			{"gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"hello"}]}]`},
			{"gen_ai.usage.input_tokens", 12}, {"gen_ai.usage.output_tokens", 3},
			{"gen_ai.usage.cache_read.input_tokens", 4},
		},
		inputs:     `{"gen_ai.input.messages":[{"role":"user","parts":[{"type":"text","content":"hi"}]}]}`,
		output:     `{"gen_ai.output.messages":[{"role":"assistant","parts":[{"type":"text","content":"hello"}]}]}`,
		summary:    `{"usage":{"gpt-4o-2024-08-06":{"input_tokens":12,"output_tokens":3,"cache_read_input_tokens":4,"total_tokens":15}}}`,
		attributes: `{"model":"gpt-4o-2024-08-06","provider":"openai","model_parameters":{"model":"gpt-4o"},"operation":"chat"}`,
	}, {
		name: "otel genai legacy indexed prompts (OpenLLMetry)",
		attrs: []kv{
			{"gen_ai.system", "openai"}, {"gen_ai.request.model", "gpt-4"},
			{"gen_ai.prompt.0.role", "system"}, {"gen_ai.prompt.0.content", "be brief"},
			{"gen_ai.prompt.1.role", "user"}, {"gen_ai.prompt.1.content", "hi"},
			{"gen_ai.completion.0.role", "assistant"}, {"gen_ai.completion.0.content", "hello"},
			{"gen_ai.usage.prompt_tokens", 7}, {"gen_ai.usage.completion_tokens", "2"},
			{"llm.usage.total_tokens", 9}, {"traceloop.span.kind", "task"},
		},
		inputs:     `{"gen_ai.prompt":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`,
		output:     `{"gen_ai.completion":[{"role":"assistant","content":"hello"}]}`,
		summary:    `{"usage":{"gpt-4":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}}`,
		attributes: `{"system":"openai","kind":"task","model":"gpt-4","model_parameters":{"model":"gpt-4"}}`,
	}, {
		name: "openinference",
		attrs: []kv{
			{"openinference.span.kind", "LLM"}, {"llm.model_name", "llama-3-70b"}, {"llm.provider", "groq"},
			{"input.value", `{"question":"capital?"}`}, {"input.mime_type", "application/json"},
			{"output.value", "Paris"}, {"llm.invocation_parameters", `{"temperature":0.1}`},
			{"llm.token_count.prompt", 20}, {"llm.token_count.completion", 5}, {"llm.token_count.total", 25},
			{"llm.token_count.prompt_details.cache_read", 0},
		},
		inputs:     `{"input.value":{"question":"capital?"}}`,
		output:     `{"output.value":"Paris"}`,
		summary:    `{"usage":{"llama-3-70b":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25,"cache_read_input_tokens":0}}}`,
		attributes: `{"kind":"LLM","model":"llama-3-70b","provider":"groq","model_parameters":{"temperature":0.1}}`,
	}, {
		name: "vercel ai sdk",
		attrs: []kv{
			{"ai.model.id", "gpt-4o-mini"}, {"ai.model.provider", "openai.chat"},
			{"ai.prompt", `{"prompt":"tell a joke"}`}, {"ai.response.text", "a joke"},
			{"ai.usage.promptTokens", 10}, {"ai.usage.completionTokens", 6},
		},
		inputs:     `{"ai.prompt":{"prompt":"tell a joke"}}`,
		output:     `{"ai.response":{"text":"a joke"}}`,
		summary:    `{"usage":{"gpt-4o-mini":{"prompt_tokens":10,"completion_tokens":6,"total_tokens":16}}}`,
		attributes: `{"model":"gpt-4o-mini","provider":"openai.chat"}`,
	}, {
		name:       "mlflow",
		attrs:      []kv{{"mlflow.spanInputs", `{"x":1}`}, {"mlflow.spanOutputs", `[1,2]`}, {"mlflow.spanType", "CHAIN"}},
		inputs:     `{"mlflow.spanInputs":{"x":1}}`,
		output:     `{"mlflow.spanOutputs":[1,2]}`,
		summary:    `{}`,
		attributes: `{}`,
	}, {
		name: "traceloop entity",
		attrs: []kv{
			{"traceloop.span.kind", "workflow"}, {"traceloop.entity.input", `{"args":["a"]}`},
			{"traceloop.entity.output", `"done"`},
		},
		inputs:     `{"traceloop.entity.input":{"args":["a"]}}`,
		output:     `{"traceloop.entity.output":"\"done\""}`,
		summary:    `{}`,
		attributes: `{"kind":"workflow"}`,
	}, {
		name: "langfuse",
		attrs: []kv{
			{"langfuse.observation.type", "generation"}, {"langfuse.observation.model.name", "mistral-large"},
			{"langfuse.observation.input", `[{"role":"user","content":"q"}]`}, {"langfuse.observation.output", "a"},
			{"gen_ai.usage.input_tokens", 0}, {"gen_ai.usage.output_tokens", 1},
		},
		inputs:     `{"langfuse.observation.input":[{"role":"user","content":"q"}]}`,
		output:     `{"langfuse.observation.output":"a"}`,
		summary:    `{"usage":{"mistral-large":{"input_tokens":0,"output_tokens":1,"total_tokens":1}}}`,
		attributes: `{"kind":"generation","model":"mistral-large"}`,
	}, {
		name: "logfire / pydantic ai",
		attrs: []kv{
			{"pydantic_ai.all_messages", `[{"role":"user","parts":[]}]`}, {"final_result", "42"},
			{"gen_ai.agent.name", "calc"}, {"logfire.msg", "calc run"},
		},
		inputs:     `{"pydantic_ai.all_messages":[{"role":"user","parts":[]}]}`,
		output:     `{"final_result":"42"}`,
		summary:    `{}`,
		attributes: `{"agent":"calc"}`,
	}, {
		name:       "google adk",
		attrs:      []kv{{"gcp.vertex.agent.llm_request", `{"model":"gemini"}`}, {"gcp.vertex.agent.llm_response", `{"text":"ok"}`}},
		inputs:     `{"gcp.vertex.agent.llm_request":{"model":"gemini"}}`,
		output:     `{"gcp.vertex.agent.llm_response":{"text":"ok"}}`,
		summary:    `{}`,
		attributes: `{}`,
	}, {
		name: "bedrock strands events",
		events: map[string][]kv{
			"gen_ai.user.message": {{"content", `[{"text":"hi"}]`}},
			"gen_ai.choice":       {{"message", "hello"}, {"finish_reason", "end_turn"}},
		},
		inputs:     `{"events.gen_ai.user.message":[{"content":[{"text":"hi"}]}]}`,
		output:     `{"events.gen_ai.choice":[{"message":"hello","finish_reason":"end_turn"}]}`,
		summary:    `{}`,
		attributes: `{}`,
	}, {
		name:       "generic input and output",
		attrs:      []kv{{"input", map[string]any{"a": int64(1)}}, {"output", int64(42)}},
		inputs:     `{"a":1}`,
		output:     `42`,
		summary:    `{}`,
		attributes: `{}`,
	}, {
		name:       "no convention keeps the whole tree",
		attrs:      []kv{{"http.method", "GET"}, {"http.route", "/x"}, {"retries", int64(0)}},
		inputs:     `{}`,
		summary:    `{}`,
		attributes: `{"http":{"method":"GET","route":"/x"},"retries":0}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			td := oneSpan(t, tc.attrs, func(s ptrace.Span) {
				for name, attrs := range tc.events {
					e := s.Events().AppendEmpty()
					e.SetName(name)
					putAttrs(t, e.Attributes(), attrs)
				}
			})
			call := mapOK(t, Options{}, td)
			jsonEq(t, "inputs", call.Inputs, tc.inputs)
			jsonEq(t, "output", call.Output, tc.output)
			jsonEq(t, "summary", call.Summary, tc.summary)
			jsonEq(t, "attributes", call.Attributes, tc.attributes)
		})
	}
}
