package storage

import (
	"context"
	"time"
)

// ProjectSummary is one project that holds data: visible calls, object
// versions, tables or feedback.
type ProjectSummary struct {
	ProjectID      string
	CallCount      int64
	LastCallAt     time.Time // latest call start, UTC; zero without calls
	ObjectCount    int64     // object versions not deleted
	TableCount     int64
	FeedbackCount  int64
	LastActivityAt time.Time // the latest call start or creation of the others, UTC
}

// MaxProjects bounds how many projects one listing returns.
const MaxProjects = 1000

// ProjectLister lists an entity's projects. Weft creates no projects:
// every project of an entity exists, so the ones worth offering are those
// holding data.
type ProjectLister interface {
	// ListProjects returns the entity's projects that hold non-deleted
	// calls, object versions, tables or feedback, the most recently
	// active first (ties by id), at most MaxProjects.
	ListProjects(ctx context.Context, entity string) ([]ProjectSummary, error)
}

// ProjectStats is a project's storage use in bytes. TraceBytes is the
// project's share, by count of stored calls, of the bytes the calls take
// on disk: what a store can answer from its own counts at once, where
// summing every call's JSON would read the whole project. The others are
// the sizes of the project's live object versions, table rows and files.
type ProjectStats struct {
	TraceBytes  int64
	ObjectBytes int64
	TableBytes  int64
	FileBytes   int64
}

// ProjectStatsReader answers /project/stats.
type ProjectStatsReader interface {
	// ProjectStats returns the project's storage use.
	ProjectStats(ctx context.Context, projectID string) (ProjectStats, error)
}

// ShareOf is bytes split by the project's part of all calls: the rule
// both stores answer TraceBytes by.
func ShareOf(bytes, projectCalls, allCalls int64) int64 {
	if allCalls <= 0 || projectCalls <= 0 || bytes <= 0 {
		return 0
	}
	return int64(float64(bytes) * float64(projectCalls) / float64(allCalls))
}
