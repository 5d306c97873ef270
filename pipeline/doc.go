// Package pipeline carries call writes from receivers to storage: a bounded
// in-process queue with group commit (many requests share one storage
// transaction), the processor that merges parts of the same call, and the
// Submitter interface receivers depend on. Submit returns only when the
// records are durable.
//
// It must never import receivers or the query API.
package pipeline
