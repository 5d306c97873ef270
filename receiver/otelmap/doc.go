// Package otelmap maps OpenTelemetry spans (the Collector's pdata) to Weave
// calls: one complete call part per span, plus a rejection for each span
// that cannot be mapped, for OTLP partial_success.
//
// The mapping follows Weave's trace server so that a span becomes the same
// call in Weave and in Weft:
//
//   - Attributes are unflattened on dots ("llm.token_count.prompt" becomes
//     {"llm":{"token_count":{"prompt":...}}}); objects whose keys are 0..n-1
//     become lists; string values that are JSON objects or arrays are
//     embedded as JSON. A key holding both a value and nested keys rejects
//     the span (ConflictError). Span events are searchable as
//     "events.<event name>" (a list, one entry per event).
//   - Inputs, outputs, usage, model, attributes, display name, thread and
//     turn come from ordered key lists held as data (Conventions); the
//     first key with a value wins. Empty strings, lists and objects count
//     as absent; zero and false are values (Weave drops them).
//   - summary.usage is keyed by model (what costs join on), else "usage";
//     it is omitted when the span carries no token counts.
//   - A span with status ERROR gets exception = the status message, or the
//     first "exception" event as "type: message" when the message is empty.
//     Exception events on spans without ERROR status do not fail the call.
//   - Ids: the call id is the span id and the trace id the OTel trace id, in
//     lowercase hex; parent_id is the parent span id. Spans with an empty
//     trace or span id, or no start time, are rejected.
//   - op_name is the span name as a plain string (see OpName).
//   - otel_dump keeps the whole span.
//
// The package owns no I/O. It must never import receivers, the pipeline,
// auth or storage backends; it depends only on pdata and the storage
// record types.
package otelmap
