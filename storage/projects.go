package storage

import (
	"context"
	"time"
)

// ProjectSummary is one project that holds calls.
type ProjectSummary struct {
	ProjectID  string
	CallCount  int64
	LastCallAt time.Time // latest call start, UTC
}

// MaxProjects bounds how many projects one listing returns.
const MaxProjects = 1000

// ProjectLister lists an entity's projects. Weft creates no projects:
// every project of an entity exists, so the ones worth offering are those
// holding visible calls.
type ProjectLister interface {
	// ListProjects returns the entity's projects that hold non-deleted
	// calls, the most recently active first, at most MaxProjects.
	ListProjects(ctx context.Context, entity string) ([]ProjectSummary, error)
}
