package storage

import (
	"context"
	"time"
)

// Retention says how long calls are kept, counted from their start: the
// configured default and per-project overrides, and the changes made
// through the API (ttl.go), which win from the moment they were made;
// zero keeps calls forever.
type Retention struct {
	Default  time.Duration
	Projects map[string]time.Duration
	// Changes are each project's RetentionChanges, oldest first.
	Changes map[string][]RetentionChange
}

// Enabled reports whether any project's calls expire.
func (r Retention) Enabled() bool {
	if r.Default > 0 {
		return true
	}
	for _, d := range r.Projects {
		if d > 0 {
			return true
		}
	}
	for _, changes := range r.Changes {
		for _, c := range changes {
			if c.Days > 0 {
				return true
			}
		}
	}
	return false
}

// CallExpirer is implemented by backends that must be told to drop calls
// past their retention (the embedded store); backends that expire rows by
// themselves (ClickHouse's TTL) do not implement it.
type CallExpirer interface {
	// ExpireCalls deletes calls whose start is older than their project's
	// retention at now, and returns how many went.
	ExpireCalls(ctx context.Context, r Retention, now time.Time) (int64, error)
}
