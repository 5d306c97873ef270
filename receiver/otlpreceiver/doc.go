// Package otlpreceiver receives OpenTelemetry traces over OTLP/HTTP
// (POST /otel/v1/traces and /otel/v1/trace, protobuf or JSON, optionally
// gzip or deflate) and OTLP/gRPC (TraceService/Export), authenticates
// them, maps every span to a Weave call with otelmap and hands the calls
// to the pipeline. It acknowledges a request only once the pipeline says
// the calls are durable.
//
// Answers follow the OTLP specification in the request's own encoding:
// success is an ExportTraceServiceResponse (with partial_success when some
// spans were rejected), errors are a google.rpc.Status. Overload and
// shutdown answer 429/503 (RESOURCE_EXHAUSTED/UNAVAILABLE) with a retry
// delay, so exporters retry instead of dropping spans.
//
// The project of a span comes from the project_id header (or gRPC
// metadata), else from its resource attributes wandb.entity and
// wandb.project. Every project of a request is authorised for write.
//
// It must never import storage backends, the processor or the query API;
// it depends on the consumer.Calls and auth.Verifier interfaces.
package otlpreceiver
