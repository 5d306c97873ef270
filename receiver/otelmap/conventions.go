package otelmap

// FieldKeys names one Weave field and the span attribute keys that may carry
// it, in priority order: the first key holding a non-empty value wins.
type FieldKeys struct {
	Field string
	Keys  []string
}

// Conventions is the mapping from span attributes to call fields, held as
// data so that supporting a new instrumentation library is a table edit.
// Keys are dotted paths into the unflattened attribute tree; a path that
// starts with "events." looks at the attributes of the span events of that
// name instead (a list, one entry per event).
type Conventions struct {
	// Inputs and Outputs: the value found is stored under its source key,
	// e.g. {"input.value": ...}, except that a generic "input"/"inputs"
	// object becomes the inputs and a generic "output"/"outputs" value
	// becomes the output.
	Inputs  []string
	Outputs []string
	// Usage fields are Weave's token counter names (what costs join on).
	Usage []FieldKeys
	// Attributes become top-level keys of the call attributes.
	Attributes []FieldKeys
	// Custom holds user attributes merged at the top level of the call
	// attributes (Weave's tagging convention).
	Custom []string

	DisplayName  []string
	ThreadID     []string
	IsTurn       []string // a truthy value marks the span as a turn
	WBRunID      []string
	WBRunStep    []string
	WBRunStepEnd []string
	// StartTime and EndTime override the span times (ISO-8601 text or
	// integer Unix nanoseconds); Langfuse carries the real times there.
	StartTime []string
	EndTime   []string
}

// Field names the mapping reads back from the attributes it built.
const (
	modelField      = "model"
	modelParamField = "model_parameters"
	// defaultUsageKey is the summary.usage key of spans without a model;
	// it never prices.
	defaultUsageKey = "usage"
)

// DefaultConventions returns the recognised conventions: OpenTelemetry
// GenAI (current and legacy keys), OpenInference, Vercel AI SDK, MLflow,
// Traceloop/OpenLLMetry, OpenLit, Langfuse, Logfire/PydanticAI, Google
// Vertex AI agents, Bedrock/Strands events and Weave's own keys. The order
// of the first entries of each list follows Weave's trace server so that a
// span maps to the same call there and here; keys Weave does not know come
// after them.
func DefaultConventions() Conventions {
	return Conventions{
		Inputs: []string{
			"ai.prompt",                       // Vercel AI SDK
			"gen_ai.prompt",                   // OTel GenAI (legacy), OpenLLMetry
			"input.value",                     // OpenInference
			"mlflow.spanInputs",               // MLflow
			"gen_ai.input.messages",           // OTel GenAI, Logfire v2
			"pydantic_ai.all_messages",        // PydanticAI agent run
			"traceloop.entity.input",          // Traceloop
			"gcp.vertex.agent.tool_call_args", // Google ADK
			"gcp.vertex.agent.llm_request",    // Google ADK
			"events.gen_ai.user.message",      // Bedrock / Strands events
			"weave.input.messages",            // Weave
			"gen_ai.tool.call.arguments",      // OTel GenAI tool spans
			"langfuse.observation.input",      // Langfuse
			"events.gen_ai.content.prompt",    // OTel GenAI legacy events
			"input",                           // generic
			"inputs",                          // generic
		},
		Outputs: []string{
			"ai.response",                      // Vercel AI SDK
			"gen_ai.completion",                // OTel GenAI (legacy), OpenLLMetry
			"output.value",                     // OpenInference
			"gen_ai.output.messages",           // OTel GenAI, Logfire v2
			"mlflow.spanOutputs",               // MLflow
			"final_result",                     // PydanticAI
			"gen_ai.content.completion",        // OpenLit
			"traceloop.entity.output",          // Traceloop
			"gcp.vertex.agent.tool_response",   // Google ADK
			"gcp.vertex.agent.llm_response",    // Google ADK
			"events.gen_ai.choice",             // Bedrock / Strands events
			"weave.output.messages",            // Weave
			"gen_ai.tool.call.result",          // OTel GenAI tool spans
			"langfuse.observation.output",      // Langfuse
			"events.gen_ai.content.completion", // OTel GenAI legacy events
			"output",                           // generic
			"outputs",                          // generic
		},
		Usage: []FieldKeys{
			{"input_tokens", []string{"weave.usage.input_tokens", "gen_ai.usage.input_tokens"}},
			{"output_tokens", []string{"weave.usage.output_tokens", "gen_ai.usage.output_tokens"}},
			{"prompt_tokens", []string{
				"gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
				"ai.usage.promptTokens", "ai.usage.inputTokens",
			}},
			{"completion_tokens", []string{
				"gen_ai.usage.completion_tokens", "llm.token_count.completion",
				"ai.usage.completionTokens", "ai.usage.outputTokens",
			}},
			{"total_tokens", []string{
				"llm.usage.total_tokens", "llm.token_count.total",
				"gen_ai.usage.total_tokens", "ai.usage.totalTokens",
			}},
			{"cache_read_input_tokens", []string{
				"weave.usage.cache_read.input_tokens", "gen_ai.usage.cache_read.input_tokens",
				"gen_ai.usage.cache_read_input_tokens", "llm.token_count.prompt_details.cache_read",
				"ai.usage.cachedInputTokens",
			}},
			{"cache_creation_input_tokens", []string{
				"weave.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation.input_tokens",
				"gen_ai.usage.cache_creation_input_tokens", "llm.token_count.prompt_details.cache_write",
			}},
		},
		Attributes: []FieldKeys{
			{"system", []string{"gen_ai.system", "llm.system", "gen_ai.system_instructions", "system_prompt"}},
			{"kind", []string{"weave.span.kind", "traceloop.span.kind", "openinference.span.kind", "langfuse.observation.type"}},
			{modelField, []string{
				"weave.response.model", "gen_ai.response.model",
				"weave.request.model", "gen_ai.request.model",
				"llm.model_name", "ai.model.id", "ai.response.model",
				"langfuse.observation.model.name",
			}},
			{"provider", []string{"llm.provider", "ai.model.provider", "weave.provider.name", "gen_ai.provider.name"}},
			{modelParamField, []string{"gen_ai.request", "llm.invocation_parameters", "langfuse.observation.model.parameters"}},
			{"agent", []string{"weave.agent.name", "gen_ai.agent.name"}},
			{"tools", []string{"gen_ai.agent.tools"}},
			{"operation", []string{"weave.operation.name", "gen_ai.operation.name"}},
		},
		Custom:       []string{"wandb.attributes"},
		DisplayName:  []string{"wandb.display_name"},
		ThreadID:     []string{"gcp.vertex.agent.session_id", "wandb.thread_id", "weave.conversation.id", "gen_ai.conversation.id"},
		IsTurn:       []string{"gcp.vertex.agent.session_id", "wandb.is_turn"},
		WBRunID:      []string{"wandb.wb_run_id"},
		WBRunStep:    []string{"wandb.wb_run_step"},
		WBRunStepEnd: []string{"wandb.wb_run_step_end"},
		StartTime:    []string{"langfuse.startTime"},
		EndTime:      []string{"langfuse.endTime"},
	}
}
