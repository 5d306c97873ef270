package traceapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/weftdev/weft/wire"
)

// listPaging reads the limit and offset query parameters of a REST list
// (the v2 endpoints): integers of 0 or more; an absent limit is absent.
func listPaging(r *http.Request, absent int64) (limit, offset int64, err error) {
	limit = absent
	q := r.URL.Query()
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"limit", &limit}, {"offset", &offset}} {
		s := q.Get(p.name)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, &wire.FieldError{Field: p.name, Schema: "int_parsing",
				Msg: fmt.Sprintf("query parameter must be an integer, got %q", s)}
		}
		if n < 0 {
			return 0, 0, &wire.FieldError{Field: p.name, Msg: fmt.Sprintf("must be 0 or more, got %d", n)}
		}
		*p.dst = n
	}
	return limit, offset, nil
}
