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
