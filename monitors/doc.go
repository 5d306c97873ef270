// Package monitors runs online scorers: a project's Monitor objects apply
// LLM-as-judge scorers (LLMAsAJudgeScorer objects), stored as the Weave
// SDK stores them, to a sample of its calls as they are stored, and
// record each verdict as runnable feedback on the call.
//
// Calls reach monitors through a queue in the store: Tap, which wraps the
// store's call writer, queues the ended calls of projects that have
// active monitors before the write path counts them stored, so a crash
// replays the queueing with the calls. One process of a deployment (the
// holder of the monitors lease) takes calls off the queue, filters and
// samples them per monitor, asks each judge through the inference
// gateway, and writes the verdict, the score call and a ledger row keyed
// by call and scorer version, which is why a call is scored at most once
// per scorer version. Failures are recorded in the ledger, with the
// calls' spend, which bounds each monitor's daily cost.
//
// It must never import the HTTP API built on it, receivers, the query API
// or a storage backend.
package monitors
