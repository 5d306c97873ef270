package storage

// The contract comes in two halves. A backend implements both; the
// query API, the receivers and the write path need only the first, and
// Weft's own services only the second.

// TraceData is the data of the Weave trace API: calls (written through
// the pipeline, read, aggregated, their threads), object versions and
// refs, tables, files, feedback and its statistics, costs, annotation
// queues, and what the store knows of its projects (their list, sizes
// and retention).
type TraceData interface {
	CallWriter
	CallReader
	ThreadReader
	CallsAggregator
	ProjectLister
	ProjectStatsReader
	RetentionStore
	ObjectStore
	TableStore
	FileStore
	FeedbackStore
	FeedbackAnalyzer
	CostStore
	AnnotationQueueStore
}

// ControlPlane is the state of Weft's own services: automations (sealed
// secrets, webhooks, the event outbox, deliveries, alert states and the
// leases that let one process of a deployment act), the training
// service's models and jobs, online scorers' queue and ledger, and the
// inference gateway's shared rate counts and limits. API keys are the
// auth package's KeyStore, kept beside the data.
type ControlPlane interface {
	AutomationsBackend
	TrainingBackend
	MonitorStore
	InferenceLimitsStore
}
