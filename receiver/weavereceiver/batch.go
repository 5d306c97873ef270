package weavereceiver

import (
	"fmt"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

type batchItem struct {
	Mode string `json:"mode"`
	Req  struct {
		Start *wire.StartedCall `json:"start"`
		End   *wire.EndedCall   `json:"end"`
	} `json:"req"`
}

// upsertBatch applies starts and ends in order; the answer has one entry
// per item: {id, trace_id} for starts, {} for ends.
func (rc *Receiver) upsertBatch(r *http.Request, body []byte) (any, error) {
	var batch []batchItem
	if err := wire.DecodeTop(body, wire.Fields{"batch": &batch}, "batch"); err != nil {
		return nil, err
	}
	a := newAuthorizer(r)
	ops := make([]storage.CallOp, 0, len(batch))
	res := make([]any, len(batch))
	for i := range batch {
		itemOps, out, err := rc.batchOps(a, &batch[i])
		if err != nil {
			return nil, prefixField(fmt.Sprintf("batch[%d]", i), err)
		}
		ops, res[i] = append(ops, itemOps...), out
	}
	if _, err := rc.submit(r.Context(), ops); err != nil {
		return nil, err
	}
	return map[string]any{"res": res}, nil
}

// batchOps maps one item to its ops (an end may carry a rename) and its
// entry of the answer.
func (rc *Receiver) batchOps(a *authorizer, it *batchItem) ([]storage.CallOp, any, error) {
	switch {
	case it.Mode == "start" || (it.Mode == "" && it.Req.Start != nil):
		if it.Req.Start == nil {
			return nil, nil, wire.Missing("req.start", " for mode start")
		}
		op, err := rc.startOp(a, it.Req.Start)
		if err != nil {
			return nil, nil, prefixField("req.start", err)
		}
		return []storage.CallOp{op}, map[string]string{"id": op.Part.Call.ID, "trace_id": op.Part.Call.TraceID}, nil
	case it.Mode == "end" || (it.Mode == "" && it.Req.End != nil):
		if it.Req.End == nil {
			return nil, nil, wire.Missing("req.end", " for mode end")
		}
		ops, err := rc.endOps(a, it.Req.End)
		return ops, struct{}{}, prefixField("req.end", err)
	}
	return nil, nil, &wire.FieldError{Field: "mode", Msg: fmt.Sprintf("Invalid mode %q: use start or end", it.Mode), Schema: wire.SchemaLiteral}
}

// callsComplete writes finished calls (the calls_complete write path).
func (rc *Receiver) callsComplete(r *http.Request, body []byte) (any, error) {
	var batch []wire.CompletedCall
	if err := wire.DecodeTop(body, wire.Fields{"batch": &batch}, "batch"); err != nil {
		return nil, err
	}
	a := newAuthorizer(r)
	ops := make([]storage.CallOp, len(batch))
	for i := range batch {
		p, err := a.write(batch[i].ProjectID)
		if err == nil {
			var part storage.CallPart
			part, err = batch[i].CompletePart(p.UserID, rc.extract)
			ops[i] = storage.CallOp{Part: &part}
		}
		if err != nil {
			return nil, prefixField(fmt.Sprintf("batch[%d]", i), err)
		}
	}
	if _, err := rc.submit(r.Context(), ops); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (rc *Receiver) callUpdate(r *http.Request, body []byte) (any, error) {
	var req struct {
		ProjectID, CallID string
		DisplayName       *string
		WBUserID          string
	}
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "call_id": &req.CallID,
		"display_name": &req.DisplayName, "wb_user_id": &req.WBUserID}, "project_id", "call_id")
	if err != nil {
		return nil, err
	}
	if req.DisplayName == nil {
		return nil, &wire.FieldError{Field: "display_name", Msg: "One of [display_name] is required for call update"}
	}
	if err := wire.CheckID("call_id", req.CallID); err != nil {
		return nil, err
	}
	p, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Write)
	if err != nil {
		return nil, err
	}
	op := storage.CallOp{Update: &storage.CallUpdate{ProjectID: req.ProjectID, ID: req.CallID, DisplayName: *req.DisplayName, WBUserID: p.UserID}}
	if _, err := rc.submit(r.Context(), []storage.CallOp{op}); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (rc *Receiver) callsDelete(r *http.Request, body []byte) (any, error) {
	var req struct {
		ProjectID string
		CallIDs   []string
		WBUserID  string
	}
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "call_ids": &req.CallIDs,
		"wb_user_id": &req.WBUserID}, "project_id", "call_ids")
	if err != nil {
		return nil, err
	}
	if len(req.CallIDs) > MaxDeleteIDs {
		return nil, httpapi.Errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("Cannot delete more than %d calls at once", MaxDeleteIDs))
	}
	for i, id := range req.CallIDs {
		if err := wire.CheckID(fmt.Sprintf("call_ids[%d]", i), id); err != nil {
			return nil, err
		}
	}
	p, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Write)
	if err != nil {
		return nil, err
	}
	op := storage.CallOp{Delete: &storage.CallDelete{ProjectID: req.ProjectID, IDs: req.CallIDs, WBUserID: p.UserID, At: rc.now().UTC()}}
	res, err := rc.submit(r.Context(), []storage.CallOp{op})
	if err != nil {
		return nil, err
	}
	return map[string]int{"num_deleted": res[0].NumDeleted}, nil
}
