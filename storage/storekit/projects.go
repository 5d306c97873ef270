package storekit

import (
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
)

// MergeProjects joins the projects holding calls with those holding
// other data (each a listing of at most storage.MaxProjects, most
// recent first), orders them by their latest activity, then id, and
// keeps storage.MaxProjects. A project among the most active overall is
// among the most active of the source its activity came from, so the
// two bounded listings are enough.
func MergeProjects(calls, data []storage.ProjectSummary) []storage.ProjectSummary {
	at := make(map[string]int, len(calls)+len(data))
	out := make([]storage.ProjectSummary, 0, len(calls)+len(data))
	for _, c := range calls {
		c.LastActivityAt = c.LastCallAt
		at[c.ProjectID] = len(out)
		out = append(out, c)
	}
	for _, d := range data {
		i, ok := at[d.ProjectID]
		if !ok {
			i = len(out)
			out = append(out, storage.ProjectSummary{ProjectID: d.ProjectID})
		}
		p := &out[i]
		p.ObjectCount, p.TableCount, p.FeedbackCount = d.ObjectCount, d.TableCount, d.FeedbackCount
		if d.LastActivityAt.After(p.LastActivityAt) {
			p.LastActivityAt = d.LastActivityAt
		}
	}
	slices.SortFunc(out, func(a, b storage.ProjectSummary) int {
		if c := b.LastActivityAt.Compare(a.LastActivityAt); c != 0 {
			return c
		}
		return strings.Compare(a.ProjectID, b.ProjectID)
	})
	return out[:min(len(out), storage.MaxProjects)]
}
