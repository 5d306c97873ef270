package forwardexporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

// WeaveSink forwards call records to a central Weft's Weave API: runs of
// call parts as /call/upsert_batch (a complete call as its start and end),
// renames as /call/update, deletes as /calls/delete, in order.
type WeaveSink struct {
	base   string
	client *http.Client
}

// NewWeaveSink sends to the Weft whose base URL is upstream.
func NewWeaveSink(upstream string, client *http.Client) *WeaveSink {
	return &WeaveSink{base: strings.TrimRight(upstream, "/"), client: client}
}

// Send implements Sink.
func (s *WeaveSink) Send(ctx context.Context, key string, ops []storage.CallOp) error {
	for len(ops) > 0 {
		path, body, n, err := nextRequest(ops)
		if err != nil {
			return &PermanentError{Msg: err.Error()}
		}
		if err := s.post(ctx, key, path, body); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// nextRequest is the request for the ops at the front: every call part
// up to the next update or delete, or that one update or delete.
func nextRequest(ops []storage.CallOp) (path string, body []byte, n int, err error) {
	switch op := ops[0]; {
	case op.Part != nil:
		for n = 1; n < len(ops) && ops[n].Part != nil; n++ {
		}
		body, err = upsertBatchBody(ops[:n])
		return "/call/upsert_batch", body, n, err
	case op.Update != nil:
		body, err = updateBody(op.Update)
		return "/call/update", body, 1, err
	case op.Delete != nil:
		body, err = deleteBody(op.Delete)
		return "/calls/delete", body, 1, err
	}
	return "", nil, 1, fmt.Errorf("a record with no part, update or delete")
}

// Close implements Sink.
func (s *WeaveSink) Close(context.Context) error {
	s.client.CloseIdleConnections()
	return nil
}

func (s *WeaveSink) post(ctx context.Context, key, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(body))
	if err != nil {
		return &PermanentError{Msg: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	reason, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // keep the connection reusable
	return classify(path, resp, reason)
}

// classify turns an upstream answer into Send's error classes.
func classify(path string, resp *http.Response, reason []byte) error {
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return nil
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		err := fmt.Errorf("POST %s: upstream answered %d: %s", path, code, bytes.TrimSpace(reason))
		return &RetryAfterError{After: parseRetryAfter(resp.Header.Get("Retry-After")), Err: err}
	case code == http.StatusRequestTimeout || code >= 500 || code < 400:
		return fmt.Errorf("POST %s: upstream answered %d: %s", path, code, bytes.TrimSpace(reason))
	}
	return &PermanentError{Status: code, Msg: fmt.Sprintf("POST %s: %s", path, bytes.TrimSpace(reason))}
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or
// unreadable (the backoff applies then).
func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}

// The request bodies, under the Weave schema's names. Times are written
// with nanoseconds so nothing is lost on the way.
type startJSON struct {
	ProjectID   string          `json:"project_id"`
	ID          string          `json:"id"`
	OpName      string          `json:"op_name"`
	DisplayName *string         `json:"display_name,omitempty"`
	TraceID     string          `json:"trace_id"`
	ParentID    *string         `json:"parent_id,omitempty"`
	ThreadID    *string         `json:"thread_id,omitempty"`
	TurnID      *string         `json:"turn_id,omitempty"`
	StartedAt   time.Time       `json:"started_at"`
	Attributes  json.RawMessage `json:"attributes,omitempty"`
	Inputs      json.RawMessage `json:"inputs,omitempty"`
	OtelDump    json.RawMessage `json:"otel_dump,omitempty"`
	WBRunID     *string         `json:"wb_run_id,omitempty"`
	WBRunStep   *int64          `json:"wb_run_step,omitempty"`
}

type endJSON struct {
	ProjectID    string          `json:"project_id"`
	ID           string          `json:"id"`
	EndedAt      time.Time       `json:"ended_at"`
	Exception    *string         `json:"exception,omitempty"`
	Output       json.RawMessage `json:"output"`
	Summary      json.RawMessage `json:"summary,omitempty"`
	WBRunStepEnd *int64          `json:"wb_run_step_end,omitempty"`
}

type batchItemJSON struct {
	Mode string `json:"mode"`
	Req  struct {
		Start *startJSON `json:"start,omitempty"`
		End   *endJSON   `json:"end,omitempty"`
	} `json:"req"`
}

func upsertBatchBody(ops []storage.CallOp) ([]byte, error) {
	items := make([]batchItemJSON, 0, len(ops)+len(ops)/2)
	for _, op := range ops {
		p := op.Part
		if p.Kind&storage.PartStart != 0 {
			var it batchItemJSON
			it.Mode, it.Req.Start = "start", toStart(&p.Call)
			items = append(items, it)
		}
		if p.Kind&storage.PartEnd != 0 {
			if p.Call.EndedAt == nil {
				return nil, fmt.Errorf("call %s: an end part without ended_at", p.Call.ID)
			}
			var it batchItemJSON
			it.Mode, it.Req.End = "end", toEnd(&p.Call)
			items = append(items, it)
		}
	}
	return json.Marshal(map[string]any{"batch": items})
}

func toStart(c *storage.Call) *startJSON {
	return &startJSON{ProjectID: c.ProjectID, ID: c.ID, OpName: c.OpName, DisplayName: optional(c.DisplayName),
		TraceID: c.TraceID, ParentID: optional(c.ParentID), ThreadID: optional(c.ThreadID), TurnID: optional(c.TurnID),
		StartedAt: c.StartedAt, Attributes: c.Attributes, Inputs: c.Inputs, OtelDump: c.OtelDump,
		WBRunID: optional(c.WBRunID), WBRunStep: c.WBRunStep}
}

func toEnd(c *storage.Call) *endJSON {
	out := c.Output
	if out == nil {
		out = json.RawMessage("null")
	}
	return &endJSON{ProjectID: c.ProjectID, ID: c.ID, EndedAt: *c.EndedAt, Exception: c.Exception,
		Output: out, Summary: c.Summary, WBRunStepEnd: c.WBRunStepEnd}
}

func updateBody(u *storage.CallUpdate) ([]byte, error) {
	return json.Marshal(map[string]any{"project_id": u.ProjectID, "call_id": u.ID, "display_name": u.DisplayName})
}

func deleteBody(d *storage.CallDelete) ([]byte, error) {
	return json.Marshal(map[string]any{"project_id": d.ProjectID, "call_ids": d.IDs})
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
