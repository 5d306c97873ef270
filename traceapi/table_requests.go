package traceapi

import (
	"encoding/json"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// tableQueryReq is the body shared by /feedback/query and /cost/query.
type tableQueryReq struct {
	ProjectID     string
	Fields        []string
	Query         json.RawMessage
	SortBy        []wire.SortBy
	Limit, Offset *int64
}

// decodeTableQuery reads a table query, authorises it, and checks its
// query and sort keys against lim (the store parses the query itself).
func decodeTableQuery(r *http.Request, body []byte, lim querylang.Limits) (tableQueryReq, error) {
	var q tableQueryReq
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.ProjectID, "fields": &q.Fields, "query": &q.Query,
		"sort_by": &q.SortBy, "limit": &q.Limit, "offset": &q.Offset}, "project_id")
	if err != nil {
		return q, err
	}
	if err := wire.CheckPaging(q.Limit, q.Offset); err != nil {
		return q, err
	}
	if _, err = httpapi.Authorize(r.Context(), q.ProjectID, auth.Read); err != nil {
		return q, err
	}
	if err := checkSort(lim, q.SortBy); err != nil {
		return q, err
	}
	_, err = lim.Parse(q.Query)
	return q, err
}

func (q tableQueryReq) offset() int64 {
	if q.Offset == nil {
		return 0
	}
	return *q.Offset
}

// decodePurge reads a purge request and the ids its query names: an $eq of
// the id field with a string literal, an $or of such terms, or (allowIn)
// an $in of the id field with string literals. Anything else is refused
// with msg, and a query over lim as any other.
func decodePurge(r *http.Request, body []byte, allowIn bool, msg string, lim querylang.Limits) (string, []string, error) {
	var projectID string
	var raw json.RawMessage
	if err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID, "query": &raw}, "project_id", "query"); err != nil {
		return "", nil, err
	}
	expr, err := lim.Parse(raw)
	if err != nil {
		return "", nil, err
	}
	ids, ok := purgeIDs(expr, allowIn)
	if !ok {
		return "", nil, invalid(msg)
	}
	_, err = httpapi.Authorize(r.Context(), projectID, auth.Write)
	return projectID, ids, err
}

func purgeIDs(e querylang.Expr, allowIn bool) ([]string, bool) {
	switch n := e.(type) {
	case *querylang.Compare:
		id, ok := idLiteral(n.Op == querylang.OpEq, n.Left, n.Right)
		return []string{id}, ok
	case *querylang.In:
		if !allowIn {
			return nil, false
		}
		var ids []string
		for _, item := range n.List {
			id, ok := idLiteral(true, n.Operand, item)
			if !ok {
				return nil, false
			}
			ids = append(ids, id)
		}
		return ids, len(ids) > 0
	case *querylang.Or:
		var ids []string
		for _, op := range n.Operands {
			c, ok := op.(*querylang.Compare)
			if !ok {
				return nil, false
			}
			id, ok := idLiteral(c.Op == querylang.OpEq, c.Left, c.Right)
			if !ok {
				return nil, false
			}
			ids = append(ids, id)
		}
		return ids, len(ids) > 0
	}
	return nil, false
}

// idLiteral accepts {"$getField": "id"} followed by a string literal.
func idLiteral(eq bool, field, lit querylang.Expr) (string, bool) {
	g, gok := field.(*querylang.GetField)
	l, lok := lit.(*querylang.Literal)
	s, sok := "", false
	if lok {
		s, sok = l.Value.(string)
	}
	return s, eq && gok && g.Path == "id" && sok
}
