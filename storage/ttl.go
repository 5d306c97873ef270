package storage

import (
	"context"
	"slices"
	"time"
)

// RetentionChange is one /project/ttl_settings/update: from At on, the
// project's calls are kept Days days from their start; 0 keeps them
// forever. Changes are appended, never rewritten, so a store keeps each
// project's history of them.
type RetentionChange struct {
	ProjectID string
	Days      int // 0: keep forever
	At        time.Time
	By        string // the user who made the change
}

// Keep is how long the change keeps calls; 0 keeps them forever.
func (c RetentionChange) Keep() time.Duration { return time.Duration(c.Days) * 24 * time.Hour }

// RetentionStore keeps the retention changes made through the API.
type RetentionStore interface {
	// AddRetentionChange appends c to its project's history.
	AddRetentionChange(ctx context.Context, c RetentionChange) error
	// RetentionChanges returns every project's changes, by project and
	// then time, the oldest first.
	RetentionChanges(ctx context.Context) ([]RetentionChange, error)
}

// For is how long a call of project that started at start is kept, 0 for
// forever: the change in force when the call started, or, before the
// project's first change, the configured retention. As the reference
// stamps a call's expiry when it is written, a change applies to calls
// written after it and leaves the expiry of earlier ones as it was; Weft
// takes a call's start for its write, which is the same for calls
// traced live.
func (r Retention) For(project string, start time.Time) time.Duration {
	changes := r.Changes[project]
	i, _ := slices.BinarySearchFunc(changes, start, func(c RetentionChange, t time.Time) int { return c.At.Compare(t) })
	// changes[i-1] is the last change at or before start, if any; a change
	// made at the very instant start counts as in force.
	if i < len(changes) && changes[i].At.Equal(start) {
		return changes[i].Keep()
	}
	if i > 0 {
		return changes[i-1].Keep()
	}
	if d, ok := r.Projects[project]; ok {
		return d
	}
	return r.Default
}

// Current is the retention a call of project starting now gets.
func (r Retention) Current(project string) time.Duration {
	if changes := r.Changes[project]; len(changes) > 0 {
		return changes[len(changes)-1].Keep()
	}
	if d, ok := r.Projects[project]; ok {
		return d
	}
	return r.Default
}

// WithChanges returns r with changes (sorted by project and time, as
// RetentionStore returns them) grouped per project.
func (r Retention) WithChanges(changes []RetentionChange) Retention {
	out := r
	out.Changes = map[string][]RetentionChange{}
	for _, c := range changes {
		out.Changes[c.ProjectID] = append(out.Changes[c.ProjectID], c)
	}
	return out
}
