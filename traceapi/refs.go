package traceapi

import (
	"encoding/json"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/wire"
)

// readRefs serves /refs/read_batch. A batch may name refs of many
// projects, so access is decided per ref: a ref the caller may not read
// resolves to null exactly as a missing one does, and nothing tells the
// two apart.
func (a *ObjectsAPI) readRefs(r *http.Request, body []byte) (any, error) {
	var uris []string
	if err := wire.DecodeTop(body, wire.Fields{"refs": &uris}, "refs"); err != nil {
		return nil, err
	}
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok {
		return nil, auth.ErrUnauthenticated
	}
	canRead := func(projectID string) bool { return p.Authorize(projectID, auth.Read) == nil }
	vals, err := a.store.ReadRefs(r.Context(), canRead, uris)
	if err != nil {
		return nil, err
	}
	if vals == nil {
		vals = []json.RawMessage{}
	}
	return map[string][]json.RawMessage{"vals": vals}, nil
}
