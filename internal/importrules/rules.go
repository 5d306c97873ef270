package importrules

// A Rule forbids the packages matching From, but not Except, to depend on
// the packages matching Forbid. Patterns are import paths relative to the
// module ("storage", "receiver/..." for a subtree, "..." for every module
// package) or, when the first element has a dot, absolute paths of other
// modules ("github.com/duckdb/duckdb-go/...").
type Rule struct {
	From, Except, Forbid []string
	Why                  string
}

var backends = []string{"storage/duckdb/...", "storage/clickhouse/..."}

// Rules are the project's import rules.
var Rules = []Rule{
	{From: []string{"storage/..."},
		Forbid: []string{"receiver/...", "processor/...", "exporter/...", "traceapi/...", "app/...", "cmd/...", "wire/...", "internal/httpapi/..."},
		Why:    "storage is the contract and its backends: it knows no receiver, processor, exporter, query API, wiring or HTTP shape"},
	{From: []string{"..."}, Except: []string{"app/...", "cmd/...", "storage/duckdb/..."}, Forbid: []string{"storage/duckdb/..."},
		Why: "only app and cmd know concrete backends; everything else uses the storage contract"},
	{From: []string{"..."}, Except: []string{"app/...", "cmd/...", "storage/clickhouse/..."}, Forbid: []string{"storage/clickhouse/..."},
		Why: "only app and cmd know concrete backends; everything else uses the storage contract"},
	{From: []string{"storage", "storage/querylang/...", "storage/sqlgen/...", "storage/storekit/...", "storage/conformance/...", "storage/errkind/...", "storage/latencyhist/..."},
		Forbid: []string{"github.com/duckdb/duckdb-go/...", "github.com/ClickHouse/clickhouse-go/..."},
		Why:    "only a backend talks to its database driver"},
	{From: []string{"storage/querylang/..."}, Forbid: []string{"storage", "storage/sqlgen/...", "storage/storekit/..."},
		Why: "package storage carries parsed queries, so the parser must not import it"},
	{From: []string{"storage/errkind/..."}, Forbid: []string{"..."},
		Why: "the error kinds are a leaf every storage package may import"},
	{From: []string{"receiver/..."}, Forbid: []string{"exporter/...", "processor/...", "traceapi/..."},
		Why: "receivers hand records to the pipeline; they never reach exporters, processors or the query API"},
	{From: []string{"processor/..."}, Forbid: []string{"receiver/...", "traceapi/..."},
		Why: "processors consume what receivers queued, never the receivers themselves"},
	{From: []string{"exporter/..."}, Forbid: []string{"receiver/...", "processor/...", "traceapi/..."},
		Why: "exporters only write batches handed to them"},
	{From: []string{"traceapi/..."}, Forbid: []string{"receiver/...", "processor/...", "exporter/..."},
		Why: "the query API reads through the storage contract only"},
	{From: []string{"consumer/...", "internal/kafkabase/...", "internal/wal/...", "internal/telemetry/...", "internal/backoff/..."},
		Forbid: []string{"receiver/...", "processor/...", "exporter/...", "traceapi/..."},
		Why:    "what the pipeline's components share must not depend on the components"},
	{From: []string{"wire/...", "auth/...", "internal/httpapi/..."}, Forbid: []string{"receiver/...", "traceapi/..."},
		Why: "shared layers must not depend on the receivers or the query API built on them"},
	{From: []string{"digest/...", "refs/...", "pricing/..."}, Forbid: []string{"storage/...", "wire/...", "internal/httpapi/..."},
		Why: "pure computation: no storage and no HTTP code"},
	{From: []string{"automations/..."}, Forbid: []string{"receiver/...", "processor/...", "exporter/...", "traceapi/..."},
		Why: "automations reach objects through the storage contract, never through the trace pipeline's components"},
	{From: []string{"automations/template/...", "automations/signing/...", "automations/egress/...", "automations/secretbox/..."},
		Forbid: []string{"..."},
		Why:    "payload templates, signatures, the egress client and sealing are mechanisms that know nothing of the project"},
	{From: []string{"automations", "automations/delivery/...", "automations/kafkaevents/..."}, Forbid: []string{"automations/api/..."},
		Why: "the HTTP API is built on the automations service, not the other way round"},
	{From: []string{"automations/delivery/..."}, Forbid: []string{"automations", "automations/kafkaevents/..."},
		Why: "delivery sends what the service dispatched; it does not know the service or how events travel"},
	{From: []string{"graphql/..."}, Forbid: []string{"storage/...", "receiver/...", "processor/...", "exporter/...", "traceapi/...", "wire/...", "internal/httpapi/..."},
		Why: "the GraphQL endpoint answers from the caller's key alone: no storage, no trace API shapes"},
	{From: []string{"internal/tlsutil/..."}, Forbid: []string{"..."},
		Why: "certificate loading and generation is a leaf the wiring and the CLI use"},
	{From: []string{"monitors/..."}, Forbid: []string{"receiver/...", "processor/...", "exporter/...", "traceapi/...", "storage/duckdb/...", "storage/clickhouse/..."},
		Why: "monitors read and write through the storage contract and hand score calls to the pipeline's front; they never reach its components, the trace API or a backend"},
	{From: []string{"inference/..."}, Forbid: []string{"receiver/...", "processor/...", "exporter/...", "traceapi/..."},
		Why: "the gateway hands its calls to the pipeline's front through a recorder; it never reaches pipeline components or the query API"},
	{From: []string{"..."}, Except: []string{"inference/upstreamtest/...", "cmd/weft-bench/...", "e2e/..."}, Forbid: []string{"inference/upstreamtest/..."},
		Why: "the fake upstream is for tests and benchmarks: production code never imports it"},
	{From: []string{"..."}, Except: []string{"app/...", "cmd/...", "e2e/..."}, Forbid: []string{"app/..."},
		Why: "app wires everything together; nothing imports it but cmd and end-to-end tests"},
	{From: []string{"..."}, Except: []string{"internal/chfront/...", "cmd/weft-devstack/..."},
		Forbid: []string{"internal/chdb/...", "internal/chfront/...", "internal/kafkatest/..."},
		Why:    "test and development infrastructure: production code never imports it"},
	{From: []string{"internal/chdb/..."}, Forbid: []string{"..."},
		Why: "test infrastructure imports no other package of the project"},
	{From: []string{"training/..."}, Forbid: []string{"receiver/...", "processor/...", "exporter/...", "traceapi/...", "inference/..."},
		Why: "the training service reaches storage through its contract and the gateway reaches it, not the other way round"},
	{From: []string{"training", "training/jobs/...", "training/queue/...", "training/trajectory/...", "training/protocol/..."},
		Forbid: []string{"training/api/...", "training/trainer/...", "internal/httpapi/..."},
		Why:    "the service, its queue and its rules know no HTTP: the API and the trainer are built on them"},
	{From: []string{"training/jobs/...", "training/protocol/..."}, Forbid: []string{"training/queue/...", "internal/kafkabase/...", "github.com/segmentio/kafka-go/..."},
		Why: "the job state machine and the wire shapes are pure: no queue transport, no Kafka"},
	{From: []string{"training/trainer/..."}, Forbid: []string{"storage/...", "auth/...", "training", "training/queue/...", "training/api/..."},
		Why: "weft trainer is a client: it speaks the worker protocol over HTTP and knows nothing of the server"},
	{From: []string{"..."}, Except: []string{"training/queue/queuetest/..."}, Forbid: []string{"training/queue/queuetest/..."},
		Why: "the queue's test driver is for tests: production code never imports it"},
	{From: []string{"internal/kafkatest/..."},
		Forbid: []string{"receiver/...", "processor/...", "exporter/...", "traceapi/...", "app/...", "cmd/...", "storage/duckdb/...", "storage/clickhouse/..."},
		Why:    "test infrastructure: a Kafka cluster and the settings for it, nothing of the components under test"},
}
