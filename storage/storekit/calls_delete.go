package storekit

import (
	"context"
	"slices"
	"time"

	"github.com/weftdev/weft/storage"
)

// CallTree is what a call delete needs to find the calls it removes.
// Both methods see only live (not deleted) calls of the project, including
// those the same batch wrote earlier.
type CallTree interface {
	// LiveCalls returns the ids among ids that name live calls.
	LiveCalls(ctx context.Context, projectID string, ids []string) ([]string, error)
	// LiveChildren returns the ids of the live calls whose parent is one
	// of parents.
	LiveChildren(ctx context.Context, projectID string, parents []string) ([]string, error)
}

// CallsToDelete returns the calls d removes: the live calls among its ids
// and every live descendant reachable by parent links, each once, level
// by level. Its length is the delete's num_deleted: ids that name no call,
// or a call deleted before, count for nothing.
func CallsToDelete(ctx context.Context, tree CallTree, d *storage.CallDelete) ([]string, error) {
	if len(d.IDs) == 0 {
		return nil, nil
	}
	level, err := tree.LiveCalls(ctx, d.ProjectID, DistinctSorted(d.IDs))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for len(level) > 0 {
		var next []string
		for _, id := range DistinctSorted(level) {
			if id != "" && !seen[id] {
				seen[id] = true
				out, next = append(out, id), append(next, id)
			}
		}
		if len(next) == 0 {
			break
		}
		if level, err = tree.LiveChildren(ctx, d.ProjectID, next); err != nil {
			return nil, err
		}
	}
	return slices.Clip(out), nil
}

// DeleteStamp is the deleted_at a delete writes: at (now when at is
// unset), in UTC, at the millisecond precision the reference server keeps
// deletes at (DateTime64(3)), so every backend stores the same instant.
func DeleteStamp(at time.Time, now func() time.Time) time.Time {
	if at.IsZero() {
		at = now()
	}
	return at.UTC().Truncate(time.Millisecond)
}
