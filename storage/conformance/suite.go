package conformance

import (
	"testing"

	"github.com/weftdev/weft/storage"
)

// Store is the whole storage contract; a backend under test provides all
// of it.
type Store interface {
	storage.CallWriter
	storage.CallReader
	storage.ThreadReader
	storage.CallsAggregator
	storage.ProjectLister
	storage.ProjectStatsReader
	storage.RetentionStore
	storage.ObjectStore
	storage.TableStore
	storage.FileStore
	storage.FeedbackStore
	storage.FeedbackAnalyzer
	storage.CostStore
	storage.AutomationsBackend
	storage.TrainingBackend
	storage.AnnotationQueueStore
	storage.MonitorStore
	storage.InferenceLimitsStore
}

// RunAll runs every suite of the contract (calls, threads, aggregates, objects and
// refs, tables, files, feedback, costs, automations, training), each case against a fresh, empty
// store from newStore. It is the only entry point: a backend's test calls
// it once, so a suite added here runs on every backend.
func RunAll(t *testing.T, newStore func(t *testing.T) Store) {
	suites := []struct {
		name string
		run  func(t *testing.T)
	}{
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
		{"Automations", func(t *testing.T) {
			runAutomations(t, func(t *testing.T) storage.AutomationsBackend { return newStore(t) })
		}},
		{"Training", func(t *testing.T) { runTraining(t, func(t *testing.T) storage.TrainingBackend { return newStore(t) }) }},
		{"Annotations", func(t *testing.T) { runAnnotations(t, func(t *testing.T) annotationStore { return newStore(t) }) }},
		{"Monitors", func(t *testing.T) { runMonitors(t, func(t *testing.T) monitorStore { return newStore(t) }) }},
		{"InferenceLimits", func(t *testing.T) {
			runInferenceLimits(t, func(t *testing.T) storage.InferenceLimitsStore { return newStore(t) })
		}},
	}
	for _, s := range suites {
		t.Run(s.name, s.run)
	}
}
