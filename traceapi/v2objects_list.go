package traceapi

import (
	"iter"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
)

// v2ListPage is how many versions a list reads from the store at a time:
// the answer streams, so a list without a limit holds one page (and the
// source files of its ops or models) in memory, never the whole project.
const v2ListPage = 500

// list streams the family's live versions as JSON lines, after offset and
// at most limit of them (query parameters, both optional). The read holds
// its turn at the store until the stream ends; each page's store work is
// bounded by the budget's duration.
func (a *V2ObjectsAPI) list(w http.ResponseWriter, r *http.Request, k v2Kind) {
	limit, offset, err := listPaging(r, -1)
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	a.budget.stream(w, r, func(r *http.Request) (iter.Seq2[any, error], error) {
		projectID, _, err := authorize(r, auth.Read)
		if err != nil {
			return nil, err
		}
		return a.listed(r, k, projectID, limit, offset), nil
	})
}

// listed pages through the project's live versions of kind k.
func (a *V2ObjectsAPI) listed(r *http.Request, k v2Kind, projectID string, limit, offset int64) iter.Seq2[any, error] {
	src := a.sources(projectID)
	return func(yield func(any, error) bool) {
		for remaining := limit; remaining != 0; {
			page := int64(v2ListPage)
			if remaining > 0 {
				page = min(page, remaining)
			}
			res, err := a.objects.QueryObjects(r.Context(), storage.ObjQueryReq{ProjectID: projectID,
				Filter: k.filter(), SortBy: k.sortBy(), Limit: &page, Offset: &offset})
			if err != nil {
				yield(nil, err)
				return
			}
			for _, o := range res.Objs {
				v, err := k.view(r.Context(), src, o)
				if !yield(v, err) || err != nil {
					return
				}
			}
			if int64(len(res.Objs)) < page {
				return
			}
			offset += page
			if remaining > 0 {
				remaining -= page
			}
		}
	}
}
