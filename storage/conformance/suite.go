package conformance

import (
	"testing"

	"github.com/weftdev/weft/storage"
)

// TraceStore is the trace-data half of the contract under test.
type TraceStore = storage.TraceData

// ControlStore is the control-plane half under test, with the object
// store its monitors cases publish Monitor objects to.
type ControlStore interface {
	storage.ControlPlane
	storage.ObjectStore
}

type suite struct {
	name string
	run  func(t *testing.T)
}

func runSuites(t *testing.T, suites []suite) {
	for _, s := range suites {
		t.Run(s.name, s.run)
	}
}

// RunTraceData runs every case of the trace-data half (calls, usage
// sorts, threads, aggregates, project statistics, retention, objects and
// refs, tables, files, feedback and its statistics, costs, annotation
// queues), each against a fresh, empty store from newStore. A backend's
// test calls it once, so a case added here runs on every backend.
func RunTraceData(t *testing.T, newStore func(t *testing.T) TraceStore) {
	runSuites(t, []suite{
		{"Calls", func(t *testing.T) { runCalls(t, func(t *testing.T) callStore { return newStore(t) }) }},
		{"UsageSort", func(t *testing.T) { runUsageSort(t, func(t *testing.T) usageStore { return newStore(t) }) }},
		{"Threads", func(t *testing.T) { runThreads(t, func(t *testing.T) threadStore { return newStore(t) }) }},
		{"Aggregate", func(t *testing.T) { runAggregate(t, func(t *testing.T) aggregateStore { return newStore(t) }) }},
		{"ProjectStats", func(t *testing.T) { runProjectStats(t, func(t *testing.T) projectStatsStore { return newStore(t) }) }},
		{"RetentionChanges", func(t *testing.T) { runRetentionChanges(t, newStore(t)) }},
		{"Objects", func(t *testing.T) { runObjects(t, func(t *testing.T) storage.ObjectStore { return newStore(t) }) }},
		{"Tables", func(t *testing.T) { runTables(t, func(t *testing.T) storage.TableStore { return newStore(t) }) }},
		{"Files", func(t *testing.T) { runFiles(t, func(t *testing.T) storage.FileStore { return newStore(t) }) }},
		{"Feedback", func(t *testing.T) { runFeedback(t, func(t *testing.T) storage.FeedbackStore { return newStore(t) }) }},
		{"FeedbackStats", func(t *testing.T) { runFeedbackStats(t, func(t *testing.T) feedbackStatsStore { return newStore(t) }) }},
		{"Costs", func(t *testing.T) { runCosts(t, func(t *testing.T) storage.CostStore { return newStore(t) }) }},
		{"Annotations", func(t *testing.T) { runAnnotations(t, func(t *testing.T) annotationStore { return newStore(t) }) }},
	})
}

// RunControlPlane runs every case of the control-plane half
// (automations with their deliveries and alerts, training, monitors, the
// gateway's limits), each against a fresh, empty store from newStore.
func RunControlPlane(t *testing.T, newStore func(t *testing.T) ControlStore) {
	runSuites(t, []suite{
		{"Automations", func(t *testing.T) {
			runAutomations(t, func(t *testing.T) storage.AutomationsBackend { return newStore(t) })
		}},
		{"Training", func(t *testing.T) { runTraining(t, func(t *testing.T) storage.TrainingBackend { return newStore(t) }) }},
		{"Monitors", func(t *testing.T) { runMonitors(t, func(t *testing.T) monitorStore { return newStore(t) }) }},
		{"InferenceLimits", func(t *testing.T) {
			runInferenceLimits(t, func(t *testing.T) storage.InferenceLimitsStore { return newStore(t) })
		}},
	})
}
