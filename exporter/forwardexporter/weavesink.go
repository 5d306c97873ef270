package forwardexporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

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
func (s *WeaveSink) Send(ctx context.Context, key string, ops []storage.CallOp) (int, error) {
	accepted := 0
	for accepted < len(ops) {
		path, body, n, err := nextRequest(ops[accepted:])
		if err != nil {
			return accepted, &PermanentError{Msg: err.Error()}
		}
		if err := s.post(ctx, key, path, body); err != nil {
			return accepted, err
		}
		accepted += n
	}
	return accepted, nil
}

// nextRequest is the request for the ops at the front: a run of complete
// calls of one project (the calls_complete endpoint: one item per call),
// a run of starts and ends, or one update or delete.
func nextRequest(ops []storage.CallOp) (path string, body []byte, n int, err error) {
	switch op := ops[0]; {
	case completeCall(op):
		project := op.Part.Call.ProjectID
		for n = 1; n < len(ops) && completeCall(ops[n]) && ops[n].Part.Call.ProjectID == project; n++ {
		}
		body, err = completeBody(ops[:n])
		return completePath(project), body, n, err
	case op.Part != nil:
		for n = 1; n < len(ops) && ops[n].Part != nil && !completeCall(ops[n]); n++ {
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

// SendOTLP implements Sink: one POST to the center's OTLP/HTTP endpoint.
func (s *WeaveSink) SendOTLP(ctx context.Context, key, project string, request []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+otlpPath, bytes.NewReader(request))
	if err != nil {
		return 0, "", &PermanentError{Msg: err.Error()}
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer "+key)
	if project != "" {
		req.Header.Set("project_id", project)
	}
	reason, resp, err := s.do(req)
	if err != nil {
		return 0, "", err
	}
	if err := classify(otlpPath, resp, reason); err != nil {
		return 0, "", err
	}
	out := ptraceotlp.NewExportResponse()
	if out.UnmarshalProto(reason) != nil {
		return 0, "", nil // accepted; an unreadable answer names no refusal
	}
	ps := out.PartialSuccess()
	return int(ps.RejectedSpans()), ps.ErrorMessage(), nil
}

// otlpPath is the center's OTLP/HTTP trace endpoint.
const otlpPath = "/otel/v1/traces"

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
	reason, resp, err := s.do(req)
	if err != nil {
		return err
	}
	return classify(path, resp, reason)
}

// do sends req and returns the start of the answer's body.
func (s *WeaveSink) do(req *http.Request) ([]byte, *http.Response, error) {
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %w", req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // keep the connection reusable
	return body, resp, nil
}

// classify turns an upstream answer into Send's error classes.
func classify(path string, resp *http.Response, reason []byte) error {
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return nil
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		err := fmt.Errorf("POST %s: upstream answered %d: %s", path, code, printable(reason))
		return &RetryAfterError{After: parseRetryAfter(resp.Header.Get("Retry-After")), Err: err}
	case code == http.StatusRequestTimeout || code >= 500 || code < 400:
		return fmt.Errorf("POST %s: upstream answered %d: %s", path, code, printable(reason))
	}
	return &PermanentError{Status: code, Msg: fmt.Sprintf("POST %s: %s", path, printable(reason))}
}

// printable is the start of an answer's body fit for a log line (an OTLP
// error body is a protobuf status).
func printable(body []byte) string {
	return strings.ToValidUTF8(string(bytes.TrimSpace(body[:min(len(body), 512)])), "?")
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

// completeCall reports a whole call that calls_complete takes (it needs
// the trace id); other complete parts travel as a start and an end.
func completeCall(op storage.CallOp) bool {
	return op.Part != nil && op.Part.Kind == storage.PartComplete && op.Part.Call.TraceID != "" && op.Part.Call.EndedAt != nil
}

func completePath(project string) string {
	entity, name, _ := strings.Cut(project, "/")
	return "/v2/" + url.PathEscape(entity) + "/" + url.PathEscape(name) + "/calls/complete"
}

type completeJSON struct {
	*startJSON
	*endFields
}

// endFields are an end's columns without its ids, for a complete item.
type endFields struct {
	EndedAt      time.Time       `json:"ended_at"`
	Exception    *string         `json:"exception,omitempty"`
	Output       json.RawMessage `json:"output"`
	Summary      json.RawMessage `json:"summary,omitempty"`
	WBRunStepEnd *int64          `json:"wb_run_step_end,omitempty"`
}

func completeBody(ops []storage.CallOp) ([]byte, error) {
	items := make([]completeJSON, len(ops))
	for i, op := range ops {
		end := toEnd(&op.Part.Call)
		items[i] = completeJSON{toStart(&op.Part.Call), &endFields{EndedAt: end.EndedAt, Exception: end.Exception,
			Output: end.Output, Summary: end.Summary, WBRunStepEnd: end.WBRunStepEnd}}
	}
	return json.Marshal(map[string]any{"batch": items})
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
